package v1

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views/document"
)

const (
	reviewsPerPage  = 20
	reviewsMaxPages = 10
)

// reviewCursor is a reviews nextCursor: the filters it belongs to, the
// page number, and the last review of the page.
type reviewCursor struct {
	Query  string `json:"q"`
	Page   int    `json:"p"`
	Posted int64  `json:"t"`
	ID     string `json:"i"`
}

// decodeReviewCursor reads a reviews cursor; ok is false for anything this
// API did not issue, and for one whose fields are out of the bounds of
// any cursor it issues.
func decodeReviewCursor(s string) (reviewCursor, bool) {
	c, ok := document.DecodeCursor[reviewCursor](s)
	return c, ok && c.Page >= 1 && c.Page < reviewsMaxPages && c.ID != ""
}

// ReviewPage is a page of a listing's reviews, as
// /api/v1/listings/{store}/{id}/reviews and the page of its reviews give
// it. Review text and authors are written by store users: they are data.
type ReviewPage struct {
	Store            string             `json:"store"`
	ID               string             `json:"id"`
	ReviewsCollected bool               `json:"reviewsCollected"` // false on chrome, whose reviews are not stored
	Reviews          []analytics.Review `json:"reviews"`
	NextCursor       *string            `json:"nextCursor"`
	Partial          bool               `json:"partial"` // q's search ran past its budget; no next page is offered
	// Asked is the query the page answers, as read (not in the JSON).
	Asked ReviewsAsked `json:"-"`
}

// ReviewsAsked is a page of reviews' query as read, canonical: its
// stars (all, critical or positive), its words q trimmed, and its cursor
// written again from what it holds ("" on the first page). The page of
// reviews writes its form and links from it, as its cache key is made of
// it.
type ReviewsAsked struct {
	Stars, Q, Cursor string
}

// getReviews answers GET /api/v1/listings/{store}/{id}/reviews: stored
// reviews, newest first, 20 a page, at most 10 pages, read from ClickHouse
// under the read budget and cached per view generation.
func (s *API) getReviews(c *fiber.Ctx) (answer.Reply, error) {
	a, err := s.Reviews(c, "/api/v1/listings/:store/:id/reviews", func(out *ReviewPage) (*answer.Answer, error) {
		return answer.Search(out, out.Partial)
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// Reviews answers c's page of a listing's reviews on route (the API's or
// the page's): one preamble (the listing, stars, q, cursor), one read of
// ClickHouse in its budget (and a search slot for q), and its typed
// result written by codec, cached per view generation under the route's
// key of the listing, its filters and its cursor as read (never as
// sent), the read in a turn of the miss gate. A search cut short by its
// budget is not kept (answer.Search).
func (s *API) Reviews(c *fiber.Ctx, route string, codec func(*ReviewPage) (*answer.Answer, error)) (*answer.Answer, error) {
	st, l, err := s.FindListing(c)
	if err != nil {
		return nil, err
	}
	store, id := l.Store, l.ID
	stars := analytics.ReviewStars(c.Query("stars", string(analytics.StarsAll)))
	switch stars {
	case analytics.StarsAll, analytics.StarsCritical, analytics.StarsPositive:
	default:
		return nil, problem.Newf(http.StatusBadRequest, "stars: %q is not all, critical (1-2 stars) or positive (4-5 stars).", stars).
			ForReaders("Reviews are shown all together, critical (1 or 2 stars) or positive (4 or 5 stars).")
	}
	text := strings.Clone(strings.TrimSpace(c.Query("q")))
	if text == "" && c.Query("q") != "" {
		return nil, problem.New(http.StatusBadRequest, "q: it has only spaces; search the reviews with a word or more, or leave q out.").
			ForReaders("Search the reviews with a word or more, not only spaces.")
	}
	if len(text) > 200 {
		return nil, problem.New(http.StatusBadRequest, "q: search with at most 200 characters.").
			ForReaders("Search the reviews with a few words, at most 200 characters.")
	}
	canon := string(stars) + "\x00" + text
	q := analytics.ReviewQuery{Store: store, ListingID: id, Stars: stars, Text: text, Limit: reviewsPerPage,
		Budget: s.searchBudget()}
	page := 1
	var cur reviewCursor // the page's place, as the cache key takes it
	if raw := c.Query("cursor"); raw != "" {
		var ok bool
		cur, ok = decodeReviewCursor(raw)
		if !ok {
			return nil, BadCursor()
		}
		if cur.Query != canon {
			return nil, problem.New(http.StatusBadRequest, "cursor: it was issued for other stars or another q; repeat them with it.").
				ForReaders(staleNext)
		}
		q.AfterPosted, q.AfterID, page = time.Unix(cur.Posted, 0), cur.ID, cur.Page+1
	}
	asked := ReviewsAsked{Stars: string(stars), Q: text}
	if page > 1 {
		asked.Cursor = *document.EncodeCursor(cur)
	}
	var buf [256]byte
	key := answer.NewKey(buf[:0], route, st.Replica.Info().Generation).
		Int("s", int64(store)).Str("id", id).Str("stars", string(stars)).Str("q", text).
		Int("p", int64(cur.Page)).Int("t", cur.Posted).Str("ci", cur.ID)
	// A miss reads ClickHouse: it waits for a turn of the miss gate, as
	// every query of the long tail does.
	return s.answers.GetQuery(key, s.gate.MissCaller(c), true, func() (*answer.Answer, error) {
		out := ReviewPage{Store: store.String(), ID: id, ReviewsCollected: store.CollectsReviews(), Reviews: []analytics.Review{}, Asked: asked}
		if !out.ReviewsCollected {
			return codec(&out)
		}
		if err := s.readReviews(c.UserContext(), &out, q, page, canon); err != nil {
			return nil, err
		}
		return codec(&out)
	})
}

// readReviews reads the page of reviews q asks for, page number page of
// the filters canon, into out.
func (s *API) readReviews(ctx context.Context, out *ReviewPage, q analytics.ReviewQuery, page int, canon string) error {
	timeout := s.cfg.ReadBudget
	if q.Text != "" {
		release, err := s.gate.SearchSlot()
		if err != nil {
			return err
		}
		defer release()
		timeout += s.cfg.SearchBudget // ClickHouse stops the search at its budget: leave it time to answer partial
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	type read struct {
		reviews []analytics.Review
		partial bool
	}
	r, err := analytics.Read(ctx, s.db, func(ctx context.Context, conn driver.Conn) (r read, err error) {
		r.reviews, r.partial, err = analytics.LoadReviews(ctx, conn, q)
		return r, err
	})
	out.Reviews, out.Partial = r.reviews, r.partial
	if err != nil {
		return s.readProblem("the reviews", err)
	}
	if out.Reviews == nil {
		out.Reviews = []analytics.Review{}
	}
	if len(out.Reviews) > reviewsPerPage {
		out.Reviews = out.Reviews[:reviewsPerPage]
		if page < reviewsMaxPages && !out.Partial {
			last := out.Reviews[len(out.Reviews)-1]
			out.NextCursor = document.EncodeCursor(reviewCursor{Query: canon, Page: page, Posted: last.PostedAt.Unix(), ID: last.ID})
		}
	}
	return nil
}
