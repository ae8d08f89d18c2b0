package pages

import (
	"net/url"
	"regexp"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
)

// reviewsHandler answers GET /listings/{store}/{id}/reviews: the
// listing's stored reviews, newest first, 20 a page, by stars and words,
// an html codec of the v1 reviews read (and its CSV and NDJSON files).
func (s *Pages) reviewsHandler() read.Handler {
	rd := *s.api.ReviewsRead()
	rd.Route, rd.CacheControl, rd.Page = "/listings/:store/:id/reviews", pageCacheControl, answer.NoPage
	page := read.Codec[v1.ReviewPage]{Name: "html", Type: fiber.MIMETextHTML, Encode: func(_ *fiber.Ctx, doc *v1.ReviewPage) (*answer.Answer, error) {
		body, err := reviewsPage(doc, doc.State.Replica)
		if err != nil {
			return nil, err
		}
		a := pageAnswer(answer.NewKey(nil, "/listings/:store/:id/reviews", 0), htmlType, body)
		a.NoStore = doc.Partial // a search cut short is asked again
		return a, nil
	}}
	codecs := append([]read.Codec[v1.ReviewPage]{page}, s.api.ReviewFiles()...)
	return read.Serve(s.api.Env(), &rd, codecs...)
}

// reviewsFeedHandler answers GET /listings/{store}/{id}/reviews.atom: the
// listing's newest 20 stored reviews (by stars and words as the page
// takes them), as Atom: an atom codec of the same read. Each entry links
// the reviews' page, whose first page shows it.
func (s *Pages) reviewsFeedHandler() read.Handler {
	rd := *s.api.ReviewsRead()
	rd.Route, rd.CacheControl, rd.Page = "/listings/:store/:id/reviews.atom", pageCacheControl, answer.NoPage
	return read.Serve(s.api.Env(), &rd, read.Codec[v1.ReviewPage]{Name: "atom", Type: "application/atom+xml",
		Encode: func(_ *fiber.Ctx, doc *v1.ReviewPage) (*answer.Answer, error) {
			body, err := reviewsFeed(doc, doc.State.Replica, s.cfg.PublicURL)
			if err != nil {
				return nil, err
			}
			a := pageAnswer(answer.NewKey(nil, "/listings/:store/:id/reviews.atom", 0), atomType, body)
			a.NoStore = doc.Partial
			return a, nil
		}})
}

// reviewsFeed is doc, a page of a listing's reviews, as an Atom feed; its
// listing looked up in r.
func reviewsFeed(doc *v1.ReviewPage, r interface {
	Lookup(views.Store, string) *views.Listing
}, base string) ([]byte, error) {
	path := "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID)
	name := listingName(doc.Store, doc.ID, r)
	page := withQuery(path+"/reviews", feedQuery(doc.Asked))
	feed := render.Feed{Title: "Reviews of " + name + " (" + doc.Store + ")", ID: "tag:edge,2026:" + path + "/reviews.atom",
		Self: withQuery(path+"/reviews.atom", feedQuery(doc.Asked)), Alt: page}
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

// feedQuery is the reviews' filters of the query asked (stars and
// words), without a cursor: a feed holds the newest.
func feedQuery(asked v1.ReviewsAsked) url.Values {
	out := url.Values{}
	if asked.Stars != "all" {
		out.Set("stars", asked.Stars)
	}
	if asked.Q != "" {
		out.Set("q", asked.Q)
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

// reviewsPage is the page of doc, a listing's reviews, written from its
// query as read (doc.Asked), its listing looked up in r.
func reviewsPage(doc *v1.ReviewPage, r interface {
	Lookup(views.Store, string) *views.Listing
}) ([]byte, error) {
	path := "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID)
	name := listingName(doc.Store, doc.ID, r)
	filters := feedQuery(doc.Asked)
	twin := feedQuery(doc.Asked)
	if doc.Asked.Cursor != "" {
		twin.Set("cursor", doc.Asked.Cursor)
	}
	d := render.ReviewsPage{Name: name, Store: doc.Store, Listing: path, Collected: doc.ReviewsCollected, Partial: doc.Partial, Q: doc.Asked.Q,
		JSONURL: withQuery("/api/v1"+path+"/reviews", twin), AtomURL: withQuery(path+"/reviews.atom", filters)}
	for _, o := range []struct{ v, l string }{{"all", "all"}, {"critical", "critical (1 or 2 stars)"}, {"positive", "positive (4 or 5 stars)"}} {
		d.Stars = append(d.Stars, render.Option{Value: o.v, Label: o.l, Selected: doc.Asked.Stars == o.v})
	}
	if st, err := views.ParseStore(doc.Store); err == nil {
		if l := r.Lookup(st, doc.ID); l != nil {
			if l.HasStars {
				stars := l.Stars
				d.StarTable = render.StarsTable(&stars)
			}
			if v, ok := l.Rating(); ok {
				d.Rating = render.Stars(views.RoundRating(v))
			}
		}
	}
	for _, rv := range doc.Reviews {
		e := render.Review{ID: rv.ID, Stars: int(rv.Stars), Posted: rv.PostedAt.UTC().Format(time.DateOnly), Author: rv.Author, Text: rv.Text}
		if langTag.MatchString(rv.Lang) {
			e.Lang = rv.Lang
		}
		d.Reviews = append(d.Reviews, e)
	}
	if doc.NextCursor != nil {
		next := feedQuery(doc.Asked)
		next.Set("cursor", *doc.NextCursor)
		d.Older = path + "/reviews?" + next.Encode()
	}
	if doc.Asked.Cursor != "" {
		d.Newest = withQuery(path+"/reviews", filters)
	}
	return render.RenderReviews(d)
}
