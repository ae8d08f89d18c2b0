package v1

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/page"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// chartTitles are the charts' names for people.
var chartTitles = map[string]string{figures.ChartTop: "Largest", figures.ChartTrending: "Trending", figures.ChartRising: "Rising",
	figures.ChartNew: "New", figures.ChartTopRated: "Top rated", figures.ChartClimbers: "Climbers"}

// htmlAnswer is figuresAnswer for a page: the HTML render makes from the
// published figures, cached per generation under key.
func (s *API) htmlAnswer(f *figures.Figures, key answer.Key, render func(*figures.Figures) ([]byte, error)) (answer.Reply, error) {
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		body, err := render(f)
		if err != nil {
			return nil, err
		}
		return answer.New(body, fiber.MIMETextHTMLCharsetUTF8), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
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
	d := page.ChartPage{Store: a.Store, Chart: a.Chart, Title: chartTitles[a.Chart], Category: category, Note: a.Note,
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
		cols = []page.Column{{Label: "Change", Definition: "charts"}, size}
	case figures.ChartRising:
		cols = []page.Column{{Label: "Change (%)", Definition: "charts"}, {Label: "Change", Definition: "charts"}, size}
	case figures.ChartTopRated:
		cols = []page.Column{{Label: "Rating", Definition: "rating"}, {Label: "Ratings", Definition: "ratingCount"}}
	case figures.ChartClimbers:
		cols = []page.Column{{Label: "Climb", Definition: "charts"}, {Label: "Rank", Definition: "storeRank"}}
	}
	l := page.List{Caption: chartTitles[a.Chart] + ", " + a.Store, URL: all, Columns: cols, Empty: a.Note}
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
			figs = []page.Figure{ch, sz}
		case figures.ChartRising:
			pct := page.Figure{Definition: "percent"}
			if e.Percent != nil {
				pct.Raw, pct.Text = strconv.FormatFloat(*e.Percent, 'f', -1, 64), "+"+strconv.FormatFloat(*e.Percent, 'f', 2, 64)+"%"
			}
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
