package v1

import (
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/accept"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/page"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
)

// chartTitles are the charts' names for people.
var chartTitles = map[string]string{figures.ChartTop: "Largest", figures.ChartTrending: "Trending", figures.ChartRising: "Rising",
	figures.ChartNew: "New", figures.ChartTopRated: "Top rated", figures.ChartClimbers: "Climbers"}

// The content types of the pages and of the feeds.
const (
	htmlType = fiber.MIMETextHTMLCharsetUTF8
	atomType = "application/atom+xml; charset=utf-8"
)

// tagPageSize is how many of a topic's listings its page shows: a phone's
// few screens (the JSON twin gives 200; the listings' browser all).
const tagPageSize = 50

// pageCacheControl is the Cache-Control of the pages and feeds: the same
// for every reader (no key, no per-caller header), so a CDN may keep them
// as it keeps the legacy API's answers (docs/pages.md, Built like every
// other answer).
var pageCacheControl = answer.Public(60 * time.Second)

// cached is a page or a feed of contentType that render makes, kept in
// the answer cache under key (whose generation says when it is made
// again), with its cache tags (pageAnswer).
func (s *API) cached(key answer.Key, contentType string, render func() ([]byte, error)) (answer.Reply, error) {
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		body, err := render()
		if err != nil {
			return nil, err
		}
		return pageAnswer(key, contentType, body), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
}

// pageAnswer is a page or a feed of key's route, with its cache tags
// (docs/operations.md, Behind a CDN): "edge", "edge-page" on every page
// and feed, and the route's ("page-charts" for /charts/{store},
// "page-home" for /, "page-events-atom" for /events.atom).
func pageAnswer(key answer.Key, contentType string, body []byte) *answer.Answer {
	return answer.New(body, contentType).Tag("edge", "edge-page", pageTag(key))
}

// pageTag is the cache tag of key's route: its path's literal segments,
// joined by '-' after "page", with '.' as '-'.
func pageTag(key answer.Key) string {
	route, _, _ := strings.Cut(string(key.Text()), "@")
	var parts []string
	for _, seg := range strings.Split(route, "/") {
		if seg != "" && !strings.HasPrefix(seg, ":") {
			parts = append(parts, strings.ReplaceAll(seg, ".", "-"))
		}
	}
	if len(parts) == 0 {
		parts = []string{"home"}
	}
	return "page-" + strings.Join(parts, "-")
}

// htmlAnswer is a page render makes from the published figures f.
func (s *API) htmlAnswer(f *figures.Figures, key answer.Key, render func(*figures.Figures) ([]byte, error)) (answer.Reply, error) {
	return s.cached(key, htmlType, func() ([]byte, error) { return render(f) })
}

// getChartPage answers GET /charts/{store}?chart=&category=: the chart's
// page, from the same answer as /api/v1/charts/{store}.
func (s *API) getChartPage(c *fiber.Ctx) (answer.Reply, error) {
	store, chart, category, f, gen, err := s.chartParams(c)
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/charts/:store", gen).Int("s", int64(store)).Str("chart", chart).Str("c", category)
	return s.htmlAnswer(f, key, func(f *figures.Figures) ([]byte, error) {
		return page.RenderChart(chartPageData(f, chartDoc(f, store, chart, category), store))
	})
}

// chartQuery is the query of a chart's addresses.
func chartQuery(chart, category string) string {
	q := url.Values{"chart": {chart}}
	if category != "" {
		q.Set("category", category)
	}
	return "?" + q.Encode()
}

// chartPageData is what the page of chart answer a shows.
func chartPageData(f *figures.Figures, a chartAnswer, store views.Store) page.ChartPage {
	category := ""
	if a.Category != nil {
		category = *a.Category
	}
	d := page.ChartPage{Store: a.Store, Chart: a.Chart, Title: chartTitles[a.Chart], Category: category, Note: readerNote(a.Note),
		JSONURL: "/api/v1/charts/" + a.Store + chartQuery(a.Chart, category)}
	for _, ch := range figures.Charts {
		d.Charts = append(d.Charts, page.Link{Label: chartTitles[ch], URL: "/charts/" + a.Store + chartQuery(ch, category), Current: ch == a.Chart})
	}
	for _, cat := range f.Categories(store) {
		d.Categories = append(d.Categories, page.Link{Label: cat.Name, Current: cat.Name == category})
	}
	if a.From != nil && a.To != nil {
		what := "Ranked by the size change"
		if a.Chart == figures.ChartClimbers {
			what = "Ranked by the store-rank climb"
		}
		d.Window = what + " from " + a.From.UTC().Format("2006-01-02 15:04") + " to " + a.To.UTC().Format("2006-01-02 15:04 UTC") +
			"; the data's newest reading is " + a.DataNow.UTC().Format("2006-01-02 15:04 UTC") + "."
	}
	d.List = chartList(a, store, "")
	return d
}

// chartList is chart answer a of store as a list of a page, its whole
// chart at all ("" on the chart's own page).
func chartList(a chartAnswer, store views.Store, all string) page.List {
	size := page.Column{Label: "Size (" + store.SizeMeasure() + ")", Definition: "size"}
	var cols []page.Column
	switch a.Chart {
	case figures.ChartTop, figures.ChartNew:
		cols = []page.Column{size}
	case figures.ChartTrending:
		cols = []page.Column{{Label: "Change", Definition: "charts"}, {Label: "Change (%)", Definition: "charts"}, size}
	case figures.ChartRising:
		cols = []page.Column{{Label: "Change (%)", Definition: "charts"}, {Label: "Change", Definition: "charts"}, size}
	case figures.ChartTopRated:
		cols = []page.Column{{Label: "Rating", Definition: "rating"}, {Label: "Ratings", Definition: "ratingCount"}}
	case figures.ChartClimbers:
		cols = []page.Column{{Label: "Climb", Definition: "charts"}, {Label: "Rank", Definition: "storeRank"}}
	}
	// An empty chart says why: in its note, below it on its own page
	// (all == ""), else in the list's place.
	empty := readerNote(a.Note)
	if all == "" {
		empty = "No listing is in this chart now: the note below says why."
	}
	l := page.List{Caption: chartTitles[a.Chart] + ", " + a.Store, URL: all, Columns: cols, Empty: empty}
	for _, e := range a.Entries {
		doc := e.Listing
		num := func(field string, v *int64) page.Figure {
			f := page.Figure{Definition: field}
			if v != nil {
				f.Raw, f.Text = strconv.FormatInt(*v, 10), page.Int(*v)
			}
			return f
		}
		sz := num("listing.size", doc.Size)
		var figs []page.Figure
		switch a.Chart {
		case figures.ChartTop, figures.ChartNew:
			figs = []page.Figure{sz}
		case figures.ChartTrending:
			ch := num("change", e.Change)
			if e.Change != nil {
				ch.Text = signed(*e.Change)
			}
			figs = []page.Figure{ch, percentFigure(e.Percent), sz}
		case figures.ChartRising:
			pct := percentFigure(e.Percent)
			ch := num("change", e.Change)
			if e.Change != nil {
				ch.Text = signed(*e.Change)
			}
			figs = []page.Figure{pct, ch, sz}
		case figures.ChartTopRated:
			r := page.Figure{Definition: "listing.rating"}
			if doc.Rating != nil {
				r.Raw, r.Text = strconv.FormatFloat(*doc.Rating, 'f', -1, 64), strconv.FormatFloat(*doc.Rating, 'f', 2, 64)+" ★"
			}
			figs = []page.Figure{r, num("listing.ratingCount", doc.RatingCount)}
		case figures.ChartClimbers:
			cl := page.Figure{Definition: "climb"}
			if e.Climb != nil {
				cl.Raw, cl.Text = strconv.Itoa(*e.Climb), "+"+strconv.Itoa(*e.Climb)
			}
			rk := page.Figure{Definition: "listing.storeRank"}
			if doc.StoreRank != nil {
				rk.Raw, rk.Text = strconv.Itoa(*doc.StoreRank), page.Int(int64(*doc.StoreRank))
			}
			figs = []page.Figure{cl, rk}
		}
		name := doc.Name
		if name == "" {
			name = doc.ID
		}
		l.Entries = append(l.Entries, page.Entry{Position: e.Position, Name: name, Developer: doc.Developer,
			URL: "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID), Figures: figs})
	}
	return l
}

// homeTop is how many entries of each store's trending chart the home
// page shows, and storeTop of each chart a store's page shows.
const (
	homeTop  = 5
	storeTop = 10
)

// getHomePage answers GET / for a browser (Accept: text/html preferred to JSON): the five
// stores with the top of their trending charts. A program, or a browser
// before the figures are built, gets the home of the API's links.
func (s *API) getHomePage(c *fiber.Ctx) error {
	if !acceptsHTML(c) {
		return c.Next()
	}
	f, gen, err := s.figures("The stores' figures are")
	if err != nil {
		return c.Next()
	}
	var buf [32]byte
	reply, err := s.htmlAnswer(f, answer.NewKey(buf[:0], "/", gen), func(f *figures.Figures) ([]byte, error) {
		var stores []page.StoreSummary
		for _, st := range views.Stores {
			stats := f.Stats(st)
			top := chartList(trimChart(chartDoc(f, st, figures.ChartTrending, ""), homeTop), st, "/charts/"+st.String()+chartQuery(figures.ChartTrending, ""))
			stores = append(stores, page.StoreSummary{Store: st.String(), URL: "/stores/" + st.String(), Live: stats.Live,
				TotalSize: stats.TotalSize, SizeMeasure: stats.SizeMeasure, Top: top})
		}
		return page.RenderHome(stores, f.Replica().Info().ReadingsMark.UTC().Format("2006-01-02 15:04 UTC"))
	})
	if err != nil {
		return err
	}
	reply.VaryAccept = true
	return s.respond.Handle(func(*fiber.Ctx) (answer.Reply, error) { return reply, nil })(c)
}

// acceptsHTML reports whether the request asks for a page: its Accept
// weighs text/html above JSON (package accept).
func acceptsHTML(c *fiber.Ctx) bool {
	return accept.Prefers(c.Request().Header.Peek(fiber.HeaderAccept), fiber.MIMETextHTML, fiber.MIMEApplicationJSON)
}

// trimChart keeps the first n entries of chart answer a.
func trimChart(a chartAnswer, n int) chartAnswer {
	a.Entries = a.Entries[:min(n, len(a.Entries))]
	return a
}

// getStorePage answers GET /stores/{store}: the store's statistics (as
// /api/v1/stores/{store}/stats), the top of each chart and its categories.
func (s *API) getStorePage(c *fiber.Ctx) (answer.Reply, error) {
	store, err := storeParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.figures("The store's statistics are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	return s.htmlAnswer(f, answer.NewKey(buf[:0], "/stores/:store", gen).Int("s", int64(store)), func(f *figures.Figures) ([]byte, error) {
		st := f.Stats(store)
		d := page.StorePage{Store: store.String(), AsOf: st.AsOf.UTC().Format("2006-01-02 15:04 UTC"), JSONURL: "/api/v1/stores/" + store.String() + "/stats"}
		n := func(def, label string, v int64) {
			d.Figures = append(d.Figures, page.Figure{Definition: def, Label: label, Raw: strconv.FormatInt(v, 10), Text: page.Int(v)})
		}
		n("live", "Live listings", int64(st.Live))
		n("known", "Known listings", int64(st.Known))
		n("delisted", "Delisted", int64(st.Delisted))
		n("newThisWeek", "New in the last 7 days", int64(st.NewThisWeek))
		n("delistedThisWeek", "Delisted in the last 7 days", int64(st.DelistedThisWeek))
		n("totalSize", "Total size ("+st.SizeMeasure+")", st.TotalSize)
		n("totalSizeChange7d", "Total size, change over 7 days", st.TotalSizeChange7d)
		d.Figures[len(d.Figures)-1].Text = signed(st.TotalSizeChange7d)
		avg := page.Figure{Definition: "averageRating", Label: "Average rating", Why: "no rated listing"}
		if st.AverageRating != nil {
			avg.Raw, avg.Text, avg.Why = strconv.FormatFloat(*st.AverageRating, 'f', -1, 64), strconv.FormatFloat(*st.AverageRating, 'f', 2, 64)+" ★", ""
		}
		d.Figures = append(d.Figures, avg)
		for _, ch := range figures.Charts {
			d.Charts = append(d.Charts, chartList(trimChart(chartDoc(f, store, ch, ""), storeTop), store, "/charts/"+store.String()+chartQuery(ch, "")))
		}
		for _, cat := range f.Categories(store) {
			d.Categories = append(d.Categories, page.Category{Name: cat.Name, Listings: cat.Listings,
				URL: "/charts/" + store.String() + chartQuery(figures.ChartTop, cat.Name)})
		}
		return page.RenderStore(d)
	})
}

// getCategoriesPage answers GET /categories/{store}: the store's
// categories with their live listings, each linking to its chart.
func (s *API) getCategoriesPage(c *fiber.Ctx) (answer.Reply, error) {
	store, err := storeParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.figures("The store's categories are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	return s.htmlAnswer(f, answer.NewKey(buf[:0], "/categories/:store", gen).Int("s", int64(store)), func(f *figures.Figures) ([]byte, error) {
		d := page.CountsPage{Title: "Categories of " + store.String(), Columns: []string{"Live listings"},
			Intro:   "Every category of a live listing of the " + store.String() + " store, by name; each links to its chart of the largest.",
			JSONURL: "/api/v1/categories/" + store.String()}
		d.Head.Description = d.Intro
		for _, cat := range f.Categories(store) {
			u := "/charts/" + store.String() + chartQuery(figures.ChartTop, cat.Name)
			d.Rows = append(d.Rows, page.CountRow{Name: cat.Name, URL: u, Counts: []page.Count{{Figure: "listings", N: cat.Listings}}})
		}
		return page.RenderCounts(d)
	})
}

// getTagsPage answers GET /tags: every topic with its live listings per
// store, each count linking to the topic's listings in the store.
func (s *API) getTagsPage(c *fiber.Ctx) (answer.Reply, error) {
	f, gen, err := s.figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [32]byte
	return s.htmlAnswer(f, answer.NewKey(buf[:0], "/tags", gen), func(f *figures.Figures) ([]byte, error) {
		d := page.CountsPage{Title: "Topics", Intro: "Every topic of the listings, with its live listings in each store; a count links to them.",
			JSONURL: "/api/v1/tags"}
		d.Head.Description = d.Intro
		for _, st := range views.Stores {
			d.Columns = append(d.Columns, st.String())
		}
		for _, t := range f.Topics() {
			row := page.CountRow{Name: t.Slug}
			for _, st := range views.Stores {
				row.Counts = append(row.Counts, page.Count{Figure: "listings." + st.String(), N: t.Count(st),
					URL: "/tags/" + url.PathEscape(t.Slug) + "/" + st.String()})
			}
			d.Rows = append(d.Rows, row)
		}
		return page.RenderCounts(d)
	})
}

// getTagPage answers GET /tags/{slug}/{store}: the topic's live listings
// in the store, largest first: the first tagPageSize of
// /api/v1/tags/{slug}/{store}'s, and a link to all of them in the
// listings' browser.
func (s *API) getTagPage(c *fiber.Ctx) (answer.Reply, error) {
	store, err := storeParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	slug, err := tagArg(f, c.Params("slug"))
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/tags/:slug/:store", gen).Str("tag", slug).Int("s", int64(store))
	return s.htmlAnswer(f, key, func(f *figures.Figures) ([]byte, error) {
		ls, _ := f.TopicListings(slug, store)
		l := page.List{Caption: slug + " in " + store.String() + ", largest first", Empty: "No live listing of " + store.String() + " has this topic.",
			Columns: []page.Column{{Label: "Size (" + store.SizeMeasure() + ")", Definition: "size"}}}
		for i, li := range ls[:min(len(ls), tagPageSize)] {
			doc := document.NewListing(li, f)
			sz := page.Figure{Definition: "size"}
			if doc.Size != nil {
				sz.Raw, sz.Text = strconv.FormatInt(*doc.Size, 10), page.Int(*doc.Size)
			}
			name := doc.Name
			if name == "" {
				name = doc.ID
			}
			l.Entries = append(l.Entries, page.Entry{Position: i + 1, Name: name, Developer: doc.Developer,
				URL: "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID), Figures: []page.Figure{sz}})
		}
		intro := strconv.Itoa(len(ls)) + " live listings of " + store.String() + " have the topic " + slug
		if len(ls) > tagPageSize {
			l.URL = "/listings?" + url.Values{"store": {store.String()}, "tag": {slug}}.Encode()
			intro += "; the " + strconv.Itoa(tagPageSize) + " largest are shown here, and every one in the listings' browser"
		}
		return page.RenderListings(page.ListingsPage{Title: "Topic " + slug + " in " + store.String(), Intro: intro + ".", List: l,
			JSONURL: "/api/v1/tags/" + url.PathEscape(slug) + "/" + store.String()})
	})
}

// percentFigure is a chart entry's percent change, signed, two decimals
// (— when its size at the window's start was 0).
func percentFigure(p *float64) page.Figure {
	f := page.Figure{Definition: "percent"}
	if p != nil {
		sign := "+"
		if *p < 0 {
			sign = ""
		}
		f.Raw, f.Text = strconv.FormatFloat(*p, 'f', -1, 64), sign+strconv.FormatFloat(*p, 'f', 2, 64)+"%"
	}
	return f
}

// readerWords turns a chart's note, written in the API's field names
// (from, to, dataNow, growth.7d), into a reader's words for its page.
var readerWords = strings.NewReplacer(
	"size change from from to to", "size change between the window's start and its end",
	"store rank at from (7 days before the data's newest reading) minus its rank at to (dataNow)", "store rank 7 days before the newest data minus its rank now",
	"the data's newest reading (dataNow), the same two instants", "the newest data, the same two instants",
	"its size at from", "its size at the window's start",
	"It is not the listing's own growth.7d, which ends at its newest reading.", "It is not the listing's own 7-day growth, which ends at its newest reading.",
)

// readerNote is note in a reader's words.
func readerNote(note string) string { return readerWords.Replace(note) }
