package pages

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
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
func (s *Pages) getBrowsePage(c *fiber.Ctx) (answer.Reply, error) {
	return s.api.Listings(c, "/listings", pageCacheControl, browseHTML)
}

// browseHTML writes p, the page of listings c's query asks for, as the
// listings' page; one cut short by its time budget is not kept.
func browseHTML(c *fiber.Ctx, p *document.ListingPage) (*answer.Answer, error) {
	body, err := browsePage(c, p)
	if err != nil {
		return nil, err
	}
	if p.Partial {
		a := answer.New(body, htmlType)
		a.NoStore = true
		return a, nil
	}
	return pageAnswer(answer.NewKey(nil, "/listings", 0), htmlType, body), nil
}

// browsePage is the page of doc, the listings c's query asks for.
func browsePage(c *fiber.Ctx, doc *document.ListingPage) ([]byte, error) {
	q := c.Queries()
	sort := q["sort"]
	if sort == "" {
		sort = "installs"
	}
	d := render.BrowsePage{Q: q["q"], Category: q["category"], Tag: q["tag"], Partial: doc.Partial, JSONURL: "/api/v1/listings"}
	if qs := c.Request().URI().QueryString(); len(qs) > 0 {
		d.JSONURL += "?" + string(qs)
	}
	for _, st := range views.Stores {
		d.Stores = append(d.Stores, render.Option{Value: st.String(), Label: st.String(), Selected: q["store"] == st.String()})
	}
	for _, name := range listq.V1SortNames() {
		d.Sorts = append(d.Sorts, render.Option{Value: name, Label: sortLabels[name], Selected: sort == name})
	}
	for _, o := range []string{"desc", "asc"} {
		d.Orders = append(d.Orders, render.Option{Value: o, Label: map[string]string{"desc": "largest first", "asc": "smallest first"}[o], Selected: q["order"] == o})
	}
	d.List = render.List{Caption: "Listings, by " + sortLabels[sort], Empty: "No live listing matches these filters.",
		Columns: []render.Column{{Label: "Size", Definition: "size"}, {Label: "Growth, 7 days", Definition: "growth"}, {Label: "Rating", Definition: "rating"}}}
	var l document.Listing
	for i, listing := range doc.Listings {
		l.Fill(listing, doc.Figures)
		sz := render.IntFigure("size", l.Size)
		if l.Size != nil {
			sz.Text += " " + l.SizeMeasure
		}
		g := render.ChangeFigure("growth.7d.change", l.Growth.D7.Amount())
		rt := render.RatingFigure("rating", l.Rating)
		name := l.Name
		if name == "" {
			name = l.ID
		}
		d.List.Entries = append(d.List.Entries, render.Entry{Position: i + 1, Name: name, Developer: l.Store + " · " + l.Developer,
			URL: "/listings/" + l.Store + "/" + url.PathEscape(l.ID), Figures: []render.Figure{sz, g, rt}})
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
	return render.RenderBrowse(d)
}
