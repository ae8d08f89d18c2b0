package v1

import (
	"context"
	"net/http"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

const (
	reviewSearchPerPage  = 50
	reviewSearchMaxPages = 20
	reviewSearchMin      = 3 // matching reviews a listing needs to be a hit
)

// ReviewHit is one listing of a review search answer: its store, id,
// name (null when the listing is not in the replica) and matching
// reviews.
type ReviewHit struct {
	Store   string  `json:"store"`
	ID      string  `json:"id"`
	Name    *string `json:"name"` // null when the listing is not in the replica
	Matches uint64  `json:"matches"`
}

// ReviewSearch is the answer of GET /api/v1/reviews/search (and of its
// page): the query as understood, the hits of one page, the next page.
type ReviewSearch struct {
	Query      string      `json:"q"` // the query as understood, in canonical form
	Stars      string      `json:"stars"`
	Hits       []ReviewHit `json:"hits"`
	NextCursor *string     `json:"nextCursor"`
	Partial    bool        `json:"partial"` // the search ran past its budget: hits count the reviews read until then; no next page is offered
	// Asked is the search as read (not in the JSON), for its page's form
	// and links; Offset how many hits the pages before held.
	Asked  ReviewSearchParams `json:"-"`
	Offset int                `json:"-"`
}

type reviewSearchCursor struct {
	Query string `json:"q"`
	Page  int    `json:"p"`
}

// decodeReviewSearchCursor reads a review-search cursor; ok is false for
// anything this API did not issue, and for one whose page is out of
// bounds.
func decodeReviewSearchCursor(s string) (reviewSearchCursor, bool) {
	c, ok := document.DecodeCursor[reviewSearchCursor](s)
	return c, ok && c.Page >= 1 && c.Page < reviewSearchMaxPages
}

// ReviewSearchParams are a review search as asked: the search
// ClickHouse runs, its store as sent, tag and category, the filters as a
// cursor carries them (canon) and the page's number.
type ReviewSearchParams struct {
	Search               analytics.ReviewSearch
	Store, Tag, Category string
	Canon                string
	Page                 int
}

// ReviewSearchRead is the review search's read, for its page.
func (s *API) ReviewSearchRead() *read.Read[ReviewSearchParams, ReviewSearch] { return s.reviewSearch }

// ReviewSearchFiles are the review search's CSV and NDJSON codecs.
func ReviewSearchFiles() []read.Codec[ReviewSearch] {
	return []read.Codec[ReviewSearch]{reviewSearchCSV, reviewSearchNDJSON}
}

// newReviewSearchRead declares the review search (GET
// /api/v1/reviews/search): listings with at least 3 reviews matching q,
// most matches first, 50 a page, 20 pages, read from ClickHouse under the
// search budget with a slot of the search pool (a miss waits for a turn
// of the miss gate), kept on its first ask but cut short.
func (s *API) newReviewSearchRead() *read.Read[ReviewSearchParams, ReviewSearch] {
	return &read.Read[ReviewSearchParams, ReviewSearch]{
		Route: "/api/v1/reviews/search",
		Parse: s.parseReviewSearch,
		Key: func(k answer.Key, p *ReviewSearchParams) answer.Key {
			return k.Str("q", p.Search.Query.String()).Str("stars", string(p.Search.Stars)).Str("store", p.Store).Str("tag", p.Tag).
				Str("c", p.Category).Int("page", int64(p.Page))
		},
		First: func(*fiber.Ctx, *ReviewSearchParams) bool { return true },
		Run:   s.runReviewSearch,
	}
}

// parseReviewSearch reads a review search and its cursor.
func (s *API) parseReviewSearch(c *fiber.Ctx, st *served.State, _ read.Needs) (ReviewSearchParams, error) {
	search, tag, category, err := s.reviewSearchParams(c, st)
	if err != nil {
		return ReviewSearchParams{}, err
	}
	p := ReviewSearchParams{Search: search, Store: strings.Clone(c.Query("store")), Tag: strings.Clone(tag), Category: strings.Clone(category), Page: 1}
	p.Canon = search.Query.String() + "\x00" + string(search.Stars) + "\x00" + p.Store + "\x00" + p.Tag + "\x00" + p.Category
	if raw := c.Query("cursor"); raw != "" {
		cur, ok := decodeReviewSearchCursor(raw)
		if !ok {
			return p, BadCursor()
		}
		if cur.Query != p.Canon {
			return p, problem.New(http.StatusBadRequest, "cursor: it was issued for another q, store, stars, tag or category; repeat them with it.")
		}
		p.Page = cur.Page + 1
	}
	p.Search.Limit = p.Page*reviewSearchPerPage + 1
	return p, nil
}

// runReviewSearch runs the search p.
func (s *API) runReviewSearch(c *fiber.Ctx, st *served.State, p *ReviewSearchParams, _ read.Needs) (*ReviewSearch, error) {
	release, err := s.gate.SearchSlot()
	if err != nil {
		return nil, err
	}
	defer release()
	ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.ReadBudget+s.cfg.SearchBudget)
	defer cancel()
	type result struct {
		hits    []analytics.ReviewHit
		partial bool
	}
	r, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) (r result, err error) {
		r.hits, r.partial, err = analytics.SearchReviews(ctx, conn, p.Search)
		return r, err
	})
	hits, partial := r.hits, r.partial
	if err != nil {
		return nil, s.readProblem("the review search", err)
	}
	page := p.Page
	out := &ReviewSearch{Query: p.Search.Query.String(), Stars: string(p.Search.Stars), Hits: []ReviewHit{}, Partial: partial, Asked: *p,
		Offset: (p.Page - 1) * reviewSearchPerPage}
	from := (page - 1) * reviewSearchPerPage
	for i := from; i < len(hits) && i < from+reviewSearchPerPage; i++ {
		h := ReviewHit{Store: hits[i].Store.String(), ID: hits[i].ID, Matches: hits[i].Matches}
		if l := st.Replica.Lookup(hits[i].Store, hits[i].ID); l != nil {
			name := l.Name
			h.Name = &name
		}
		out.Hits = append(out.Hits, h)
	}
	if len(hits) > page*reviewSearchPerPage && page < reviewSearchMaxPages && !partial {
		out.NextCursor = document.EncodeCursor(reviewSearchCursor{Query: p.Canon, Page: page})
	}
	return out, nil
}

// The review search's codecs: JSON, CSV (one row a listing) and NDJSON
// (one hit a line); a search cut short by its budget is not kept.
var (
	reviewSearchJSON = read.Codec[ReviewSearch]{Name: "json", Type: fiber.MIMEApplicationJSON,
		Encode: func(_ *fiber.Ctx, a *ReviewSearch) (*answer.Answer, error) { return answer.Search(a, a.Partial) }}
	reviewSearchCSV = read.Codec[ReviewSearch]{Name: "csv", Type: "text/csv", Encode: func(_ *fiber.Ctx, a *ReviewSearch) (*answer.Answer, error) {
		rows := make([][]string, len(a.Hits))
		for i, h := range a.Hits {
			rows[i] = []string{h.Store, csvw.Text(h.ID), csvw.Text(csvw.String(h.Name)), strconv.FormatUint(h.Matches, 10)}
		}
		ans, err := csvFile("review-search.csv", []string{"store", "id", "name", "matches"}, rows)
		return partialFile(ans, a.Partial), err
	}}
	reviewSearchNDJSON = read.Codec[ReviewSearch]{Name: "ndjson", Type: NDJSONContentType, Encode: func(_ *fiber.Ctx, a *ReviewSearch) (*answer.Answer, error) {
		ans, err := ndjsonFile("review-search.ndjson", a.Hits)
		return partialFile(ans, a.Partial), err
	}}
)

// filterListings returns the ids of the live listings with topic tag (in
// store, or in every store) and in category (a name of the store's
// category list, or its slug), for a review search.
func filterListings(r *replica.Replica, f *figures.Figures, store *views.Store, tag, category string) ([]string, error) {
	var name string
	if category != "" {
		var err error
		if name, err = categoryArg(f, store, category); err != nil {
			return nil, err
		}
	}
	if tag != "" {
		var err error
		if tag, err = TagArg(f, tag); err != nil {
			return nil, err
		}
	}
	ids := []string{}
	keep := func(l *views.Listing) {
		if l.Live() && (name == "" || l.Category == name) {
			ids = append(ids, l.ID)
		}
	}
	if tag == "" {
		for _, l := range r.OfStore(*store) {
			keep(&l)
		}
		return ids, nil
	}
	for s := range views.Store(views.NumStores) {
		if store != nil && s != *store {
			continue
		}
		ls, _ := f.TopicListings(tag, s)
		for _, l := range ls {
			keep(l)
		}
	}
	return ids, nil
}

// searchBudget is the budget of the review searches ClickHouse runs.
func (s *API) searchBudget() analytics.SearchBudget {
	return analytics.SearchBudget{Time: s.cfg.SearchBudget, MaxRows: s.cfg.SearchMaxRows}
}

// reviewSearchParams reads a review search's q, stars, store, tag and
// category against the published state st; a 400 says what to change.
func (s *API) reviewSearchParams(c *fiber.Ctx, st *served.State) (search analytics.ReviewSearch, tag, category string, err error) {
	q, err := analytics.ParseSearchQuery(c.Query("q"))
	if err != nil {
		return search, "", "", problem.New(http.StatusBadRequest, err.Error()+".")
	}
	search = analytics.ReviewSearch{Query: q, Stars: analytics.ReviewStars(c.Query("stars", string(analytics.StarsCritical))),
		Min: reviewSearchMin, Budget: s.searchBudget()}
	switch search.Stars {
	case analytics.StarsAll, analytics.StarsCritical, analytics.StarsPositive:
	default:
		return search, "", "", problem.Newf(http.StatusBadRequest, "stars: %q is not critical (1-2 stars, the default), positive (4-5 stars) or all.", search.Stars)
	}
	if raw := c.Query("store"); raw != "" {
		store, err := views.ParseStore(raw)
		if err != nil {
			return search, "", "", problem.Newf(http.StatusBadRequest, "store: %s", err)
		}
		search.Store = &store
	}
	tag, category = c.Query("tag"), c.Query("category")
	if category != "" && search.Store == nil {
		return search, "", "", problem.New(http.StatusBadRequest, "category: a category belongs to one store; add store.")
	}
	if tag != "" || category != "" {
		f := st.Figures
		if f == nil {
			return search, "", "", problem.NotReady("Topics and categories are")
		}
		ids, err := filterListings(st.Replica, f, search.Store, tag, category)
		if err != nil {
			return search, "", "", err
		}
		search.Listings = ids
	}
	return search, tag, category, nil
}
