package pages

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

// reviewSearchHandler answers GET /reviews/search: the review search
// across listings (an html codec of the v1 read: the listings with 3 or
// more reviews matching q, most matches first, 50 a page) with its form,
// or its files; without q, the form alone.
func (s *Pages) reviewSearchHandler() read.Handler {
	rd := *s.api.ReviewSearchRead()
	rd.Route, rd.CacheControl, rd.Page = "/reviews/search", pageCacheControl, answer.NoPage
	parse, key, run := rd.Parse, rd.Key, rd.Run
	rd.Parse = func(c *fiber.Ctx, st *served.State, n read.Needs) (v1.ReviewSearchParams, error) {
		if c.Query("q") == "" && c.Query("cursor") == "" {
			return v1.ReviewSearchParams{}, nil // the form alone
		}
		return parse(c, st, n)
	}
	rd.Key = func(k answer.Key, p *v1.ReviewSearchParams) answer.Key {
		if p.Page == 0 {
			return k.Str("form", "")
		}
		return key(k, p)
	}
	rd.Run = func(c *fiber.Ctx, st *served.State, p *v1.ReviewSearchParams, n read.Needs) (*v1.ReviewSearch, error) {
		if p.Page == 0 {
			return &v1.ReviewSearch{}, nil
		}
		return run(c, st, p, n)
	}
	page := read.Codec[v1.ReviewSearch]{Name: "html", Type: fiber.MIMETextHTML, Encode: func(_ *fiber.Ctx, v *v1.ReviewSearch) (*answer.Answer, error) {
		body, err := reviewSearchHTML(v)
		if err != nil {
			return nil, err
		}
		a := pageAnswer(answer.NewKey(nil, "/reviews/search", 0), htmlType, body)
		a.NoStore = v.Partial // a search cut short is asked again
		return a, nil
	}}
	return read.Serve(s.api.Env(), &rd, append([]read.Codec[v1.ReviewSearch]{page}, v1.ReviewSearchFiles()...)...)
}

// reviewSearchHTML is the page of the review search v.
func reviewSearchHTML(v *v1.ReviewSearch) ([]byte, error) {
	p := v.Asked
	q := url.Values{}
	for k, x := range map[string]string{"q": v.Query, "stars": v.Stars, "store": p.Store, "tag": p.Tag, "category": p.Category} {
		if x != "" && !(k == "stars" && x == "all") {
			q.Set(k, x)
		}
	}
	d := render.ReviewSearchPage{Q: v.Query, Store: p.Store, Tag: p.Tag, Category: p.Category, Asked: p.Page > 0, Partial: v.Partial,
		JSONURL: withQuery("/api/v1/reviews/search", q)}
	for _, o := range []struct{ v, l string }{{"critical", "critical (1 or 2 stars)"}, {"positive", "positive (4 or 5 stars)"}, {"all", "all"}} {
		d.Stars = append(d.Stars, render.Option{Value: o.v, Label: o.l, Selected: v.Stars == o.v || v.Stars == "" && o.v == "critical"}) // the search's default
	}
	if v.Stars != "" && v.Stars != "all" {
		d.StarsWords = map[string]string{"critical": "critical (1 or 2 stars)", "positive": "positive (4 or 5 stars)"}[v.Stars]
	}
	d.Stores = append(d.Stores, render.Option{Value: "", Label: "every store", Selected: p.Store == ""})
	for _, st := range views.Stores {
		if st.CollectsReviews() {
			d.Stores = append(d.Stores, render.Option{Value: st.String(), Label: st.String(), Selected: p.Store == st.String()})
		}
	}
	l := render.List{Caption: "Listings with 3 or more reviews matching “" + v.Query + "”, most matches first", Empty: "No listing has 3 reviews that match.",
		Columns: []render.Column{{Label: "Matching reviews"}}}
	for i, h := range v.Hits {
		name := h.ID
		if h.Name != nil && *h.Name != "" {
			name = *h.Name
		}
		n := int64(h.Matches)
		rq := url.Values{"q": {v.Query}}
		if v.Stars != "" && v.Stars != "all" {
			rq.Set("stars", v.Stars)
		}
		l.Entries = append(l.Entries, render.Entry{Position: v.Offset + i + 1, Name: name, Developer: h.Store,
			URL:     "/listings/" + h.Store + "/" + url.PathEscape(h.ID) + "/reviews?" + rq.Encode(),
			Figures: []render.Figure{render.IntFigure("hits."+strconv.Itoa(i)+".matches", &n)}})
	}
	d.List = l
	if v.NextCursor != nil {
		next := url.Values{}
		for k, x := range q {
			next[k] = x
		}
		next.Set("cursor", *v.NextCursor)
		d.Next = "/reviews/search?" + next.Encode()
	}
	return render.RenderReviewSearch(d)
}
