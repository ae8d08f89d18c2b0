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

// getReviewsFeed answers GET /listings/{store}/{id}/reviews.atom: the
// listing's newest 20 stored reviews (by stars and words as the page
// takes them), as Atom: the same query as the page and the API, another
// codec. Each entry links the reviews' page, whose first page shows it.
func (s *Pages) getReviewsFeed(c *fiber.Ctx) (answer.Reply, error) {
	st, err := s.api.Current()
	if err != nil {
		return answer.Reply{}, err
	}
	qs := string(c.Request().URI().QueryString())
	a, err := s.api.Reviews(c, "/listings/:store/:id/reviews.atom", func(doc *v1.ReviewPage) (*answer.Answer, error) {
		body, err := reviewsFeed(doc, st.Replica, qs, s.cfg.PublicURL)
		if err != nil {
			return nil, err
		}
		a := pageAnswer(answer.NewKey(nil, "/listings/:store/:id/reviews.atom", 0), atomType, body)
		a.NoStore = doc.Partial
		return a, nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
}

// reviewsFeed is doc, a page of a listing's reviews asked with the query
// string qs, as an Atom feed; its listing looked up in r.
func reviewsFeed(doc *v1.ReviewPage, r interface {
	Lookup(views.Store, string) *views.Listing
}, qs, base string) ([]byte, error) {
	path := "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID)
	name := listingName(doc.Store, doc.ID, r)
	page := withQuery(path+"/reviews", feedQuery(qs))
	feed := render.Feed{Title: "Reviews of " + name + " (" + doc.Store + ")", ID: "tag:edge,2026:" + path + "/reviews.atom",
		Self: withQuery(path+"/reviews.atom", feedQuery(qs)), Alt: page}
	for _, rv := range doc.Reviews {
		e := render.Review{Stars: int(rv.Stars)}
		title := e.StarsText()
		if rv.Author != "" {
			title += " by " + rv.Author
		}
		feed.Entries = append(feed.Entries, render.FeedEntry{ID: "tag:edge,2026:review:" + doc.Store + ":" + doc.ID + ":" + rv.ID,
			Title: title, URL: page, Summary: rv.Text, Updated: rv.PostedAt})
	}
	return render.RenderFeed(feed, base)
}

// feedQuery is the reviews' filters of the query string qs (stars and
// words), without a cursor: a feed holds the newest.
func feedQuery(qs string) url.Values {
	sent, _ := url.ParseQuery(qs)
	out := url.Values{}
	for _, k := range []string{"stars", "q"} {
		if v := sent.Get(k); v != "" {
			out.Set(k, v)
		}
	}
	return out
}

// listingName is the name of listing id of store in r, its id when it
// has none or is not found.
func listingName(store, id string, r interface {
	Lookup(views.Store, string) *views.Listing
}) string {
	if st, err := views.ParseStore(store); err == nil {
		if l := r.Lookup(st, id); l != nil && l.Name != "" {
			return l.Name
		}
	}
	return id
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
	name := listingName(doc.Store, doc.ID, r)
	d := render.ReviewsPage{Name: name, Store: doc.Store, Listing: path, Collected: doc.ReviewsCollected, Partial: doc.Partial, Q: q,
		JSONURL: "/api/v1" + path + "/reviews", AtomURL: withQuery(path+"/reviews.atom", feedQuery(qs))}
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
