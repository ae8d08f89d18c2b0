package v1

import (
	"context"
	"net/http"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
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

// reviewHit is one listing of a review search answer.
type reviewHit struct {
	Store   string  `json:"store"`
	ID      string  `json:"id"`
	Name    *string `json:"name"` // null when the listing is not in the replica
	Matches uint64  `json:"matches"`
}

// reviewSearchAnswer is the answer of GET /api/v1/reviews/search.
type reviewSearchAnswer struct {
	Query      string      `json:"q"` // the query as understood, in canonical form
	Stars      string      `json:"stars"`
	Hits       []reviewHit `json:"hits"`
	NextCursor *string     `json:"nextCursor"`
	Partial    bool        `json:"partial"` // the search ran past its budget: hits count the reviews read until then; no next page is offered
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

// getReviewSearch answers GET /api/v1/reviews/search: listings with at
// least 3 reviews matching q, most matches first, 50 a page, 20 pages.
func (s *API) getReviewSearch(c *fiber.Ctx) (answer.Reply, error) {
	st, search, tag, category, err := s.reviewSearchParams(c)
	if err != nil {
		return answer.Reply{}, err
	}
	q := search.Query
	canon := q.String() + "\x00" + string(search.Stars) + "\x00" + c.Query("store") + "\x00" + tag + "\x00" + category
	page := 1
	if raw := c.Query("cursor"); raw != "" {
		cur, ok := decodeReviewSearchCursor(raw)
		if !ok {
			return answer.Reply{}, BadCursor()
		}
		if cur.Query != canon {
			return answer.Reply{}, problem.New(http.StatusBadRequest, "cursor: it was issued for another q, store, stars, tag or category; repeat them with it.")
		}
		page = cur.Page + 1
	}
	search.Limit = page*reviewSearchPerPage + 1
	var buf [256]byte
	key := answer.NewKey(buf[:0], "/api/v1/reviews/search", st.Replica.Info().Generation).
		Str("q", q.String()).Str("stars", string(search.Stars)).Str("store", c.Query("store")).Str("tag", tag).Str("c", category).Int("page", int64(page))
	// A miss reads ClickHouse: it waits for a turn of the miss gate, as
	// every query of the long tail does.
	a, err := s.answers.GetQuery(key, s.gate.MissCaller(c), true, func() (*answer.Answer, error) {
		release, err := s.gate.SearchSlot()
		if err != nil {
			return nil, err
		}
		defer release()
		ctx, cancel := context.WithTimeout(c.UserContext(), s.cfg.ReadBudget+s.cfg.SearchBudget)
		defer cancel()
		type read struct {
			hits    []analytics.ReviewHit
			partial bool
		}
		r, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) (r read, err error) {
			r.hits, r.partial, err = analytics.SearchReviews(ctx, conn, search)
			return r, err
		})
		hits, partial := r.hits, r.partial
		if err != nil {
			return nil, s.readProblem("the review search", err)
		}
		out := reviewSearchAnswer{Query: q.String(), Stars: string(search.Stars), Hits: []reviewHit{}, Partial: partial}
		from := (page - 1) * reviewSearchPerPage
		for i := from; i < len(hits) && i < from+reviewSearchPerPage; i++ {
			h := reviewHit{Store: hits[i].Store.String(), ID: hits[i].ID, Matches: hits[i].Matches}
			if l := st.Replica.Lookup(hits[i].Store, hits[i].ID); l != nil {
				name := l.Name
				h.Name = &name
			}
			out.Hits = append(out.Hits, h)
		}
		if len(hits) > page*reviewSearchPerPage && page < reviewSearchMaxPages && !partial {
			out.NextCursor = document.EncodeCursor(reviewSearchCursor{Query: canon, Page: page})
		}
		return answer.Search(out, partial)
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

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
// category, with the published state they are read against; a 400 says
// what to change.
func (s *API) reviewSearchParams(c *fiber.Ctx) (st *served.State, search analytics.ReviewSearch, tag, category string, err error) {
	q, err := analytics.ParseSearchQuery(c.Query("q"))
	if err != nil {
		return nil, search, "", "", problem.New(http.StatusBadRequest, err.Error()+".")
	}
	st, err = s.Current()
	if err != nil {
		return nil, search, "", "", err
	}
	search = analytics.ReviewSearch{Query: q, Stars: analytics.ReviewStars(c.Query("stars", string(analytics.StarsCritical))),
		Min: reviewSearchMin, Budget: s.searchBudget()}
	switch search.Stars {
	case analytics.StarsAll, analytics.StarsCritical, analytics.StarsPositive:
	default:
		return nil, search, "", "", problem.Newf(http.StatusBadRequest, "stars: %q is not critical (1-2 stars, the default), positive (4-5 stars) or all.", search.Stars)
	}
	if raw := c.Query("store"); raw != "" {
		store, err := views.ParseStore(raw)
		if err != nil {
			return nil, search, "", "", problem.Newf(http.StatusBadRequest, "store: %s", err)
		}
		search.Store = &store
	}
	tag, category = c.Query("tag"), c.Query("category")
	if category != "" && search.Store == nil {
		return nil, search, "", "", problem.New(http.StatusBadRequest, "category: a category belongs to one store; add store.")
	}
	if tag != "" || category != "" {
		f := st.Figures
		if f == nil {
			return nil, search, "", "", problem.NotReady("Topics and categories are")
		}
		ids, err := filterListings(st.Replica, f, search.Store, tag, category)
		if err != nil {
			return nil, search, "", "", err
		}
		search.Listings = ids
	}
	return st, search, tag, category, nil
}
