package v1

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/page"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
)

// sortLabels are the v1 sorts' names for people.
var sortLabels = map[string]string{"installs": "size", "ratingcount": "ratings", "rating": "rating", "growth7d": "growth, 7 days",
	"growthpct7d": "growth %, 7 days", "growth30d": "growth, 30 days", "ratinggrowth7d": "ratings growth, 7 days", "updated": "updated",
	"created": "created", "firstseen": "first seen", "name": "name", "rankclimb": "rank climb, 7 days"}

// jsonTwin decodes the body of a JSON answer into v: the pages that show
// a query's answer (the listings, a comparison) are made from the very
// answer the API gives for it, which the API's own bounds (the miss gate,
// the search pool, the cache's second ask) already guard.
func jsonTwin(r answer.Reply, v any) error {
	if err := json.Unmarshal(r.Answer.Body, v); err != nil {
		return fmt.Errorf("read the JSON twin: %w", err)
	}
	return nil
}

// twinPage is the page render makes of twin, the JSON answer to c's query
// on route: kept in the answer cache under the twin's ETag and the query
// as sent (the form's values are the query's), so it is made once while
// its twin is the same; a twin cut short by its time budget (NoStore)
// makes a page that is not kept either.
func (s *API) twinPage(c *fiber.Ctx, route string, twin answer.Reply, render func() ([]byte, error)) (answer.Reply, error) {
	if twin.Answer.NoStore {
		body, err := render()
		if err != nil {
			return answer.Reply{}, err
		}
		a := answer.New(body, htmlType)
		a.NoStore = true
		return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
	}
	var buf [256]byte
	key := answer.NewKey(buf[:0], route, 0).Str("twin", twin.Answer.ETag).Str("q", string(c.Request().URI().QueryString()))
	return s.cached(key, htmlType, render)
}

// getBrowsePage answers GET /listings: the v1 listings' query (store,
// category, tag, q, sort, order, cursor) as a page with a plain GET form.
func (s *API) getBrowsePage(c *fiber.Ctx) (answer.Reply, error) {
	r, err := s.getListings(c)
	if err != nil {
		return answer.Reply{}, err
	}
	return s.twinPage(c, "/listings", r, func() ([]byte, error) { return s.browsePage(c, r) })
}

// browsePage is the page of r, the listings' answer to c's query.
func (s *API) browsePage(c *fiber.Ctx, r answer.Reply) ([]byte, error) {
	var doc struct {
		Listings   []ListingDoc
		NextCursor *string
		Partial    bool
	}
	if err := jsonTwin(r, &doc); err != nil {
		return nil, err
	}
	q := c.Queries()
	sort := q["sort"]
	if sort == "" {
		sort = "installs"
	}
	d := page.BrowsePage{Q: q["q"], Category: q["category"], Tag: q["tag"], Partial: doc.Partial, JSONURL: "/api/v1/listings"}
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
	for i, l := range doc.Listings {
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
	if doc.NextCursor != nil {
		next := url.Values{}
		for k, v := range q {
			if k != "cursor" {
				next.Set(k, v)
			}
		}
		next.Set("cursor", *doc.NextCursor)
		d.Next = "/listings?" + next.Encode()
	}
	return page.RenderBrowse(d)
}

// getComparePage answers GET /compare?listings=&days=: the comparison of
// /api/v1/compare as a page.
func (s *API) getComparePage(c *fiber.Ctx) (answer.Reply, error) {
	r, err := s.getCompare(c)
	if err != nil {
		return answer.Reply{}, err
	}
	return s.twinPage(c, "/compare", r, func() ([]byte, error) { return comparePage(c, r) })
}

// comparePage is the page of r, the comparison's answer to c's query.
func comparePage(c *fiber.Ctx, r answer.Reply) ([]byte, error) {
	var doc compareAnswer
	if err := jsonTwin(r, &doc); err != nil {
		return nil, err
	}
	qs := string(c.Request().URI().QueryString())
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
