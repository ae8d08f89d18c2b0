package pages

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/edge/transport"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
)

// sortLabels are the v1 sorts' names for people.
var sortLabels = map[string]string{"installs": "size", "ratingcount": "ratings", "rating": "rating", "growth7d": "growth, 7 days",
	"growthpct7d": "growth %, 7 days", "growth30d": "growth, 30 days", "ratinggrowth7d": "ratings growth, 7 days", "updated": "updated",
	"created": "created", "firstseen": "first seen", "name": "name", "rankclimb": "rank climb, 7 days"}

// browseHandler answers GET /listings: the v1 listings read (store,
// category, tag, q, sort, order, cursor) as a page with a plain GET form
// (its codec needs the total, the page before and the form's values), or
// as the API's CSV and NDJSON files of the same query (format=, or an
// Accept that prefers them), public as every page is.
func (s *Pages) browseHandler() read.Handler {
	rd := *s.api.ListingsRead()
	rd.Route, rd.CacheControl, rd.Page = "/listings", pageCacheControl, answer.NoPage
	page := read.Codec[document.ListingPage]{Name: "html", Type: fiber.MIMETextHTML,
		Needs: read.Needs{Total: true, Before: true, Form: true}, Encode: s.browseHTML}
	return read.Serve(s.api.Env(), &rd, append([]read.Codec[document.ListingPage]{page}, v1.ListingFiles("/listings")...)...)
}

// browseHTML writes p, the page of listings c's query asks for, as the
// listings' page; one cut short by its time budget is not kept, nor one
// whose suggestions stopped because its client left (the next reader of
// the same search gets them).
func (s *Pages) browseHTML(c *fiber.Ctx, p *document.ListingPage) (*answer.Answer, error) {
	body, left, err := s.browsePage(c, p)
	if err != nil {
		return nil, err
	}
	if p.Partial || left {
		a := answer.New(body, htmlType)
		a.NoStore = true
		return a, nil
	}
	return pageAnswer(answer.NewKey(nil, "/listings", 0), htmlType, body), nil
}

// maxCompared is how many listings a comparison holds at most
// (analytics.MaxSeriesListings, as /api/v1/compare takes them).
const maxCompared = 10

// browseColumn is a column of the listings' browser: its label, the
// JSON path of its figure in a listing's document (data-figure, which the
// tests compare with the JSON twin), the sort it stands for, and its
// figure of a listing.
type browseColumn struct {
	label, path, sort string
	figure            func(l *document.Listing) render.Figure
}

// browseColumns are the columns the browser always shows: size, growth
// over 7 days and rating.
var browseColumns = []browseColumn{
	{"Size", "size", "installs", func(l *document.Listing) render.Figure {
		f := render.IntFigure("size", l.Size)
		if l.Size != nil {
			f.Text += " " + l.SizeMeasure
		}
		return f
	}},
	{"Growth, 7 days", "growth.7d.change", "growth7d", func(l *document.Listing) render.Figure {
		return render.ChangeFigure("growth.7d.change", l.Growth.D7.Amount())
	}},
	{"Rating", "rating", "rating", func(l *document.Listing) render.Figure { return render.RatingFigure("rating", l.Rating) }},
}

// sortedColumns are the columns of the sorts whose figure the browser
// shows only when it sorts by it, so that the figure sorted by is always
// on the page.
var sortedColumns = map[string]browseColumn{
	"ratingcount": {"Ratings", "ratingCount", "ratingcount", func(l *document.Listing) render.Figure { return render.IntFigure("ratingCount", l.RatingCount) }},
	"growthpct7d": {"Growth %, 7 days", "growth.7d.percent", "growthpct7d", func(l *document.Listing) render.Figure {
		var p *float64
		if l.Growth.D7 != nil {
			p = l.Growth.D7.Percent
		}
		return render.PercentFigure("growth.7d.percent", p)
	}},
	"growth30d": {"Growth, 30 days", "growth.30d.change", "growth30d", func(l *document.Listing) render.Figure {
		return render.ChangeFigure("growth.30d.change", l.Growth.D30.Amount())
	}},
	"ratinggrowth7d": {"Ratings growth, 7 days", "ratingGrowth.7d.change", "ratinggrowth7d", func(l *document.Listing) render.Figure {
		var v *int64
		if l.RatingGrowth != nil {
			v = l.RatingGrowth.D7.Amount()
		}
		return render.ChangeFigure("ratingGrowth.7d.change", v)
	}},
	"updated": {"Updated", "updated", "updated", func(l *document.Listing) render.Figure { return dateFigure("updated", l.Updated) }},
	"created": {"Created", "created", "created", func(l *document.Listing) render.Figure { return dateFigure("created", l.Created) }},
	"firstseen": {"First seen", "firstSeen", "firstseen", func(l *document.Listing) render.Figure {
		return render.Figure{Definition: "firstSeen", Raw: l.FirstSeen.Format(time.RFC3339Nano), Text: l.FirstSeen.Format(time.DateOnly)}
	}},
	"rankclimb": {"Rank climb, 7 days", "rankClimb7d", "rankclimb", func(l *document.Listing) render.Figure {
		var v *int64
		if l.RankClimb7d != nil {
			n := int64(*l.RankClimb7d)
			v = &n
		}
		return render.ChangeFigure("rankClimb7d", v)
	}},
}

// dateFigure is a date of a listing's document (a store's update or
// creation date, yyyy-mm-dd), or none.
func dateFigure(path string, d *string) render.Figure {
	f := render.Figure{Definition: path}
	if d != nil {
		f.Raw, f.Text = *d, *d
	}
	return f
}

// browseOrder returns the order a browser's query asks for, as aria-sort
// says it: names A to Z unless asked otherwise, every other sort largest
// first.
func browseOrder(sort, order string) string {
	switch {
	case order == "asc", order == "" && sort == "name":
		return "ascending"
	}
	return "descending"
}

// sortLink returns the address of the browser's query q sorted by sort:
// the other order when it is sorted by it already, its default order
// otherwise; from the first page.
func sortLink(q map[string]string, current, sort string) string {
	v := url.Values{}
	for k, x := range q {
		if k != "cursor" && k != "sort" && k != "order" && x != "" {
			v.Set(k, x)
		}
	}
	v.Set("sort", sort)
	if sort == current {
		if browseOrder(current, q["order"]) == "ascending" {
			v.Set("order", "desc")
		} else {
			v.Set("order", "asc")
		}
	}
	return "/listings?" + v.Encode()
}

// browseCaption says what the browser lists and in which order; across
// every store, what "by size" orders by.
func browseCaption(q map[string]string, sort string) string {
	c := "Listings"
	if st := q["store"]; st != "" {
		c += " of " + st
	} else {
		c += " of every store"
	}
	if cat := q["category"]; cat != "" {
		c += " in " + cat
	}
	if tag := q["tag"]; tag != "" {
		c += " with the topic " + tag
	}
	if t := q["q"]; t != "" {
		c += " matching “" + t + "”"
	}
	if n := filtersSet(q); n == 1 {
		c += ", one more filter (above)"
	} else if n > 1 {
		c += fmt.Sprintf(", %d more filters (above)", n)
	}
	c += ", by " + sortLabels[sort]
	asc := browseOrder(sort, q["order"]) == "ascending"
	switch {
	case sort == "name" && asc:
		c += ", A to Z"
	case sort == "name":
		c += ", Z to A"
	case (sort == "updated" || sort == "created" || sort == "firstseen") && asc:
		c += ", oldest first"
	case asc:
		c += ", smallest first"
	}
	switch {
	case sort == "installs" && q["store"] == "":
		c += " (each store's largest, then each store's second, and so on: the stores count size in different units)"
	case (sort == "growth7d" || sort == "growth30d") && q["store"] == "":
		c += " (the stores count size in different units: users, installs, ratings; choose a store to compare like with like)"
	}
	return c
}

// browsePage is the page of doc, the listings c's query asks for,
// written from the query as the page reads it (doc.Query, which its
// cache key is made of), never from the query string as sent; left
// reports that its suggestions stopped because c's client left.
func (s *Pages) browsePage(c *fiber.Ctx, doc *document.ListingPage) (page []byte, left bool, err error) {
	q := doc.Query
	sort := q["sort"]
	if sort == "" {
		sort = "installs"
	}
	twin := url.Values{}
	for k, v := range q {
		if k != "compare" { // the page's own
			twin.Set(k, v)
		}
	}
	d := render.BrowsePage{Q: q["q"], Category: q["category"], Tag: q["tag"], Partial: doc.Partial, JSONURL: withQuery("/api/v1/listings", twin)}
	for _, st := range views.Stores {
		d.Stores = append(d.Stores, render.Option{Value: st.String(), Label: st.String(), Selected: q["store"] == st.String()})
	}
	for _, name := range listq.V1SortNames() {
		d.Sorts = append(d.Sorts, render.Option{Value: name, Label: sortLabels[name], Selected: sort == name})
	}
	for _, o := range []string{"desc", "asc"} {
		d.Orders = append(d.Orders, render.Option{Value: o, Label: map[string]string{"desc": "largest first", "asc": "smallest first"}[o], Selected: q["order"] == o})
	}
	cols := browseCols(&d, q, sort)
	d.List = browseList(q, sort, cols)
	refs := compareRefs(q["compare"])
	if len(refs) > 0 {
		d.Comparing, d.CompareSet, d.Compared = compareURL(refs, 90), strings.Join(refs, ","), len(refs)
	}
	var l document.Listing
	for i, listing := range doc.Listings {
		l.Fill(listing, doc.Figures)
		figs := make([]render.Figure, len(cols))
		for k, col := range cols {
			figs[k] = col.figure(&l)
		}
		name := l.Name
		if name == "" {
			name = l.ID
		}
		d.List.Entries = append(d.List.Entries, render.Entry{Position: doc.Offset + i + 1, Name: name, Developer: l.Store + " · " + l.Developer,
			URL: "/listings/" + l.Store + "/" + url.PathEscape(l.ID), Figures: figs})
		if ref := l.Store + ":" + l.ID; len(refs) > 0 && len(refs) < maxCompared && !slices.Contains(refs, ref) {
			d.List.Entries[len(d.List.Entries)-1].CompareURL = compareURL(append(slices.Clip(refs), ref), 90)
		}
	}
	if len(doc.Listings) == 0 && q["q"] != "" && !doc.Partial && doc.Offset == 0 {
		d.Suggestions, left = s.suggest.search(doc.Figures, q["q"], func() bool { return c != nil && transport.Gone(c.Context()) })
	}
	browsePaging(&d, q, doc)
	browseFilters(&d, q, doc.Figures)
	d.WeekNote = weekNote(doc.Figures)
	page, err = render.RenderBrowse(d)
	return page, left, err
}

// browseCols returns the columns of the browser sorted by sort: the
// figures always shown and the one sorted by. By rating, how many rated
// too (a rating of a few people ranks beside one of thousands), and d
// links the top-rated charts, which keep ratings of many.
func browseCols(d *render.BrowsePage, q map[string]string, sort string) []browseColumn {
	cols := browseColumns
	if extra, ok := sortedColumns[sort]; ok {
		cols = append(slices.Clip(cols), extra)
	}
	if sort == "rating" {
		cols = append(slices.Clip(cols), sortedColumns["ratingcount"])
		d.MinRatings = figures.TopRatedMinRatings
		for _, st := range views.Stores {
			if q["store"] == "" || q["store"] == st.String() {
				d.TopRated = append(d.TopRated, render.Link{Label: st.String(), URL: "/charts/" + st.String() + chartQuery(figures.ChartTopRated, "")})
			}
		}
	}
	return cols
}

// browsePaging sets what d says of doc's place among the query q's pages:
// how many listings it lists, which it shows, and the pages next, before
// and first.
func browsePaging(d *render.BrowsePage, q map[string]string, doc *document.ListingPage) {
	if doc.NextCursor != nil {
		next := withoutCursor(q)
		next.Set("cursor", *doc.NextCursor)
		d.Next = "/listings?" + next.Encode()
	}
	if doc.Counted && doc.Total > 0 { // none: the page says nothing matches
		d.Count = fmt.Sprintf("%s listings.", render.Int(int64(doc.Total)))
		if doc.Total == 1 {
			d.Count = "1 listing."
		}
	}
	if doc.Offset == 0 {
		return
	}
	d.First = withQuery("/listings", withoutCursor(q))
	if doc.Page == 2 {
		d.Prev = d.First
	}
	if doc.PrevCursor != nil {
		prev := withoutCursor(q)
		prev.Set("cursor", *doc.PrevCursor)
		d.Prev = "/listings?" + prev.Encode()
	}
	d.Range = fmt.Sprintf("Listings %s to %s", render.Int(int64(doc.Offset+1)), render.Int(int64(doc.Offset+len(doc.Listings))))
	if doc.Counted {
		d.Range += " of " + render.Int(int64(doc.Total))
		d.Count = ""
	}
}

// browseList is the browser's list, before its entries: its caption, and
// its columns' headings, each a link that sorts by it.
func browseList(q map[string]string, sort string, cols []browseColumn) render.List {
	l := render.List{Caption: browseCaption(q, sort), Empty: "No listing matches these filters.",
		Name: render.Column{SortURL: sortLink(q, sort, "name")}}
	if sort == "name" {
		l.Name.Sorted = browseOrder(sort, q["order"])
	}
	for _, col := range cols {
		rc := render.Column{Label: col.label, Definition: col.path, SortURL: sortLink(q, sort, col.sort)}
		if col.sort == sort {
			rc.Sorted = browseOrder(sort, q["order"])
		}
		l.Columns = append(l.Columns, rc)
	}
	return l
}

// withoutCursor is the browser's query q without its cursor: its first
// page.
func withoutCursor(q map[string]string) url.Values {
	v := url.Values{}
	for k, x := range q {
		if k != "cursor" {
			v.Set(k, x)
		}
	}
	return v
}
