package v1

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/page"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/listq"
)

// sortLabels are the v1 sorts' names for people.
var sortLabels = map[string]string{"installs": "size", "ratingcount": "ratings", "rating": "rating", "growth7d": "growth, 7 days",
	"growthpct7d": "growth %, 7 days", "growth30d": "growth, 30 days", "ratinggrowth7d": "ratings growth, 7 days", "updated": "updated",
	"created": "created", "firstseen": "first seen", "name": "name", "rankclimb": "rank climb, 7 days"}

// getBrowsePage answers GET /listings: the v1 listings' query (store,
// category, tag, q, sort, order, cursor) as a page with a plain GET form,
// from the same query as /api/v1/listings.
func (s *API) getBrowsePage(c *fiber.Ctx) (answer.Reply, error) {
	return s.listings(c, "/listings", pageCacheControl, browseHTML)
}

// browseHTML writes p, the page of listings c's query asks for, as the
// listings' page; one cut short by its time budget is not kept.
func browseHTML(c *fiber.Ctx, p *listPage) (*answer.Answer, error) {
	body, err := browsePage(c, p)
	if err != nil {
		return nil, err
	}
	if p.partial {
		a := answer.New(body, htmlType)
		a.NoStore = true
		return a, nil
	}
	return pageAnswer(answer.NewKey(nil, "/listings", 0), htmlType, body), nil
}

// browsePage is the page of doc, the listings c's query asks for.
func browsePage(c *fiber.Ctx, doc *listPage) ([]byte, error) {
	q := c.Queries()
	sort := q["sort"]
	if sort == "" {
		sort = "installs"
	}
	d := page.BrowsePage{Q: q["q"], Category: q["category"], Tag: q["tag"], Partial: doc.partial, JSONURL: "/api/v1/listings"}
	if qs := c.Request().URI().QueryString(); len(qs) > 0 {
		d.JSONURL += "?" + string(qs)
	}
	for _, st := range views.Stores {
		d.Stores = append(d.Stores, page.Option{Value: st.String(), Label: st.String(), Selected: q["store"] == st.String()})
	}
	for _, name := range listq.V1SortNames() {
		d.Sorts = append(d.Sorts, page.Option{Value: name, Label: sortLabels[name], Selected: sort == name})
	}
	for _, o := range []string{"desc", "asc"} {
		d.Orders = append(d.Orders, page.Option{Value: o, Label: map[string]string{"desc": "largest first", "asc": "smallest first"}[o], Selected: q["order"] == o})
	}
	d.List = page.List{Caption: "Listings, by " + sortLabels[sort], Empty: "No live listing matches these filters.",
		Columns: []page.Column{{Label: "Size", Definition: "size"}, {Label: "Growth, 7 days", Definition: "growth"}, {Label: "Rating", Definition: "rating"}}}
	var l document.Listing
	for i, listing := range doc.listings {
		l.Fill(listing, doc.figures)
		sz := page.Figure{Definition: "size"}
		if l.Size != nil {
			sz.Raw, sz.Text = strconv.FormatInt(*l.Size, 10), page.Int(*l.Size)+" "+l.SizeMeasure
		}
		g := page.Figure{Definition: "growth.7d.change"}
		if l.Growth.D7 != nil {
			g.Raw, g.Text = strconv.FormatInt(l.Growth.D7.Change, 10), signed(l.Growth.D7.Change)
		}
		rt := page.Figure{Definition: "rating"}
		if l.Rating != nil {
			rt.Raw, rt.Text = strconv.FormatFloat(*l.Rating, 'f', -1, 64), strconv.FormatFloat(*l.Rating, 'f', 2, 64)+" ★"
		}
		name := l.Name
		if name == "" {
			name = l.ID
		}
		d.List.Entries = append(d.List.Entries, page.Entry{Position: i + 1, Name: name, Developer: l.Store + " · " + l.Developer,
			URL: "/listings/" + l.Store + "/" + url.PathEscape(l.ID), Figures: []page.Figure{sz, g, rt}})
	}
	if doc.nextCursor != nil {
		next := url.Values{}
		for k, v := range q {
			if k != "cursor" {
				next.Set(k, v)
			}
		}
		next.Set("cursor", *doc.nextCursor)
		d.Next = "/listings?" + next.Encode()
	}
	return page.RenderBrowse(d)
}

// getComparePage answers GET /compare?listings=&days=: the comparison of
// /api/v1/compare as a page, from the same query, cached per view
// generation and query as sent (the page links its JSON and CSV by it).
func (s *API) getComparePage(c *fiber.Ctx) (answer.Reply, error) {
	qs := string(c.Request().URI().QueryString())
	a, err := s.compare(c, "/compare", func(k answer.Key) answer.Key { return k.Str("q", qs) }, func(out *compareAnswer) (*answer.Answer, error) {
		body, err := comparePage(out, qs)
		if err != nil {
			return nil, err
		}
		return pageAnswer(answer.NewKey(nil, "/compare", 0), htmlType, body), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
}

// comparePage is the page of the comparison doc, asked with the query
// string qs.
func comparePage(doc *compareAnswer, qs string) ([]byte, error) {
	d := page.ComparePage{From: doc.From, To: doc.To, Days: doc.Days, JSONURL: "/api/v1/compare?" + qs, CSVURL: "/api/v1/compare.csv?" + qs}
	for _, l := range doc.Listings {
		row := page.CompareRow{Name: l.Name, Store: l.Store, Measure: l.SizeMeasure, URL: "/listings/" + l.Store + "/" + url.PathEscape(l.ID)}
		if row.Name == "" {
			row.Name = l.ID
		}
		first, last := page.Figure{Definition: "size.first"}, page.Figure{Definition: "size.last"}
		for _, v := range l.Size {
			if v != nil {
				if first.Raw == "" {
					first.Raw, first.Text = strconv.FormatInt(*v, 10), page.Int(*v)
				}
				last.Raw, last.Text = strconv.FormatInt(*v, 10), page.Int(*v)
			}
		}
		row.First, row.Last = first, last
		row.Change, row.Percent = page.Figure{Definition: "growth.change", Why: "fewer than two days with a size"}, page.Figure{Definition: "growth.percent"}
		if g := l.Growth; g != nil {
			row.Change.Raw, row.Change.Text, row.Change.Why = strconv.FormatInt(g.Change, 10), signed(g.Change), ""
			if g.Percent != nil {
				row.Percent.Raw, row.Percent.Text = strconv.FormatFloat(*g.Percent, 'f', -1, 64), strconv.FormatFloat(*g.Percent, 'f', 2, 64)+"%"
			}
		}
		d.Rows = append(d.Rows, row)
	}
	return page.RenderCompare(d)
}
