package pages

import (
	"net/url"
	"regexp"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
)

// getReviewsPage answers GET /listings/{store}/{id}/reviews: the
// listing's stored reviews, newest first, 20 a page, by stars and words;
// the same query as /api/v1/listings/{store}/{id}/reviews, written as a
// page.
func (s *Pages) getReviewsPage(c *fiber.Ctx) (answer.Reply, error) {
	st, err := s.api.Current()
	if err != nil {
		return answer.Reply{}, err
	}
	qs := string(c.Request().URI().QueryString())
	a, err := s.api.Reviews(c, "/listings/:store/:id/reviews", func(doc *v1.ReviewPage) (*answer.Answer, error) {
		body, err := reviewsPage(doc, st.Replica, c.Query("stars"), c.Query("q"), qs)
		if err != nil {
			return nil, err
		}
		a := pageAnswer(answer.NewKey(nil, "/listings/:store/:id/reviews", 0), htmlType, body)
		a.NoStore = doc.Partial // a search cut short is asked again
		return a, nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
}

// langTag matches a language tag a page may put in lang (a store's
// review language); anything else is left out rather than made invalid.
var langTag = regexp.MustCompile(`^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$`)

// reviewsPage is the page of doc, a listing's reviews, asked with stars,
// q and the query string qs, its listing looked up in r.
func reviewsPage(doc *v1.ReviewPage, r interface {
	Lookup(views.Store, string) *views.Listing
}, stars, q, qs string) ([]byte, error) {
	path := "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID)
	name := doc.ID
	if st, err := views.ParseStore(doc.Store); err == nil {
		if l := r.Lookup(st, doc.ID); l != nil && l.Name != "" {
			name = l.Name
		}
	}
	d := render.ReviewsPage{Name: name, Store: doc.Store, Listing: path, Collected: doc.ReviewsCollected, Partial: doc.Partial, Q: q,
		JSONURL: "/api/v1" + path + "/reviews"}
	if qs != "" {
		d.JSONURL += "?" + qs
	}
	if stars == "" {
		stars = "all"
	}
	for _, o := range []struct{ v, l string }{{"all", "all"}, {"critical", "critical (1 or 2 stars)"}, {"positive", "positive (4 or 5 stars)"}} {
		d.Stars = append(d.Stars, render.Option{Value: o.v, Label: o.l, Selected: stars == o.v})
	}
	for _, rv := range doc.Reviews {
		e := render.Review{ID: rv.ID, Stars: int(rv.Stars), Posted: rv.PostedAt.UTC().Format(time.DateOnly), Author: rv.Author, Text: rv.Text}
		if langTag.MatchString(rv.Lang) {
			e.Lang = rv.Lang
		}
		d.Reviews = append(d.Reviews, e)
	}
	if doc.NextCursor != nil {
		next := url.Values{"cursor": {*doc.NextCursor}}
		if stars != "all" {
			next.Set("stars", stars)
		}
		if q != "" {
			next.Set("q", q)
		}
		d.Older = path + "/reviews?" + next.Encode()
	}
	if sent, _ := url.ParseQuery(qs); sent.Has("cursor") {
		first := url.Values{}
		if stars != "all" {
			first.Set("stars", stars)
		}
		if q != "" {
			first.Set("q", q)
		}
		d.Newest = withQuery(path+"/reviews", first)
	}
	return render.RenderReviews(d)
}
