package v1

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/served"
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
	// Asked is the query the page answers, as read, and State the state
	// it was read against (neither in the JSON).
	Asked ReviewsAsked  `json:"-"`
	State *served.State `json:"-"`
}

// ReviewsAsked is a page of reviews' query as read, canonical: its
// stars (all, critical or positive), its words q trimmed, and its cursor
// written again from what it holds ("" on the first page). The page of
// reviews writes its form and links from it, as its cache key is made of
// it.
type ReviewsAsked struct {
	Stars, Q, Cursor string
}

// ReviewsParams are a page of a listing's reviews as asked: the
// listing, the query ClickHouse runs, the page's number, its filters as
// a cursor carries them (canon) and as the page reads them (Asked).
type ReviewsParams struct {
	Listing *views.Listing
	Query   analytics.ReviewQuery
	Page    int
	Cursor  reviewCursor // the page's place, as the cache key takes it
	Canon   string
	Asked   ReviewsAsked
}

// ReviewsRead is the read of a page of a listing's reviews (GET
// /api/v1/listings/{store}/{id}/reviews, the reviews' page and feed).
func (s *API) ReviewsRead() *read.Read[ReviewsParams, ReviewPage] { return s.reviews }

// newReviewsRead declares the reviews read: stored reviews, newest first,
// 20 a page, at most 10 pages, read from ClickHouse under the read budget
// (a miss waits for a turn of the miss gate, and q for a search slot),
// kept on its first ask; a search cut short by its budget is not kept.
func (s *API) newReviewsRead() *read.Read[ReviewsParams, ReviewPage] {
	return &read.Read[ReviewsParams, ReviewPage]{
		Route: "/api/v1/listings/:store/:id/reviews",
		Page:  answer.ParentPage,
		Parse: s.parseReviews,
		Key: func(k answer.Key, p *ReviewsParams) answer.Key {
			return listingKey(k, p.Listing).Str("stars", string(p.Query.Stars)).Str("q", p.Query.Text).
				Int("p", int64(p.Cursor.Page)).Int("t", p.Cursor.Posted).Str("ci", p.Cursor.ID)
		},
		First: func(*fiber.Ctx, *ReviewsParams) bool { return true },
		Run: func(c *fiber.Ctx, st *served.State, p *ReviewsParams, _ read.Needs) (*ReviewPage, error) {
			store := p.Listing.Store
			out := &ReviewPage{Store: store.String(), ID: p.Listing.ID, ReviewsCollected: store.CollectsReviews(), Reviews: []analytics.Review{},
				Asked: p.Asked, State: st}
			if !out.ReviewsCollected {
				return out, nil
			}
			return out, s.readReviews(c.UserContext(), out, p.Query, p.Page, p.Canon)
		},
	}
}

// parseReviews reads a page of reviews' query: the listing, stars, q
// and the cursor, checked against the filters it was issued for.
func (s *API) parseReviews(c *fiber.Ctx, st *served.State, _ read.Needs) (ReviewsParams, error) {
	l, err := parseListing(c, st)
	if err != nil {
		return ReviewsParams{}, err
	}
	stars := analytics.ReviewStars(c.Query("stars", string(analytics.StarsAll)))
	switch stars {
	case analytics.StarsAll, analytics.StarsCritical, analytics.StarsPositive:
	default:
		return ReviewsParams{}, problem.Newf(http.StatusBadRequest, "stars: %q is not all, critical (1-2 stars) or positive (4-5 stars).", stars).
			ForReaders("Reviews are shown all together, critical (1 or 2 stars) or positive (4 or 5 stars).")
	}
	text := strings.Clone(strings.TrimSpace(c.Query("q")))
	if text == "" && c.Query("q") != "" {
		return ReviewsParams{}, problem.New(http.StatusBadRequest, "q: it has only spaces; search the reviews with a word or more, or leave q out.").
			ForReaders("Search the reviews with a word or more, not only spaces.")
	}
	if len(text) > 200 {
		return ReviewsParams{}, problem.New(http.StatusBadRequest, "q: search with at most 200 characters.").
			ForReaders("Search the reviews with a few words, at most 200 characters.")
	}
	p := ReviewsParams{Listing: l, Canon: string(stars) + "\x00" + text, Page: 1,
		Query: analytics.ReviewQuery{Store: l.Store, ListingID: l.ID, Stars: stars, Text: text, Limit: reviewsPerPage, Budget: s.searchBudget()}}
	if raw := c.Query("cursor"); raw != "" {
		cur, ok := decodeReviewCursor(raw)
		if !ok {
			return ReviewsParams{}, BadCursor()
		}
		if cur.Query != p.Canon {
			return ReviewsParams{}, problem.New(http.StatusBadRequest, "cursor: it was issued for other stars or another q; repeat them with it.").
				ForReaders(staleNext)
		}
		p.Cursor = cur
		p.Query.AfterPosted, p.Query.AfterID, p.Page = time.Unix(cur.Posted, 0), cur.ID, cur.Page+1
	}
	p.Asked = ReviewsAsked{Stars: string(stars), Q: text}
	if p.Page > 1 {
		p.Asked.Cursor = *document.EncodeCursor(p.Cursor)
	}
	return p, nil
}

// The reviews' codecs: JSON, CSV (one row a review) and NDJSON (one
// review a line); a search cut short by its budget is not kept.
var (
	reviewsJSON = read.Codec[ReviewPage]{Name: "json", Type: fiber.MIMEApplicationJSON,
		Encode: func(_ *fiber.Ctx, p *ReviewPage) (*answer.Answer, error) { return answer.Search(p, p.Partial) }}
	reviewsCSV = read.Codec[ReviewPage]{Name: "csv", Type: "text/csv", Encode: func(_ *fiber.Ctx, p *ReviewPage) (*answer.Answer, error) {
		rows := make([][]string, len(p.Reviews))
		for i, r := range p.Reviews {
			rows[i] = []string{p.Store, csvw.Text(p.ID), csvw.Text(r.ID), r.PostedAt.Format(time.RFC3339), strconv.Itoa(int(r.Stars)),
				csvw.Text(r.Author), csvw.Text(r.Lang), csvw.Text(r.Text)}
		}
		a, err := csvFile("reviews.csv", []string{"store", "id", "review_id", "posted_at", "stars", "author", "lang", "text"}, rows)
		return partialFile(a, p.Partial), err
	}}
	reviewsNDJSON = read.Codec[ReviewPage]{Name: "ndjson", Type: NDJSONContentType, Encode: func(_ *fiber.Ctx, p *ReviewPage) (*answer.Answer, error) {
		a, err := ndjsonFile("reviews.ndjson", p.Reviews)
		return partialFile(a, p.Partial), err
	}}
)

// ReviewFiles returns the reviews read's file codecs, CSV and NDJSON,
// for the reviews' page to offer too.
func (s *API) ReviewFiles() []read.Codec[ReviewPage] {
	return []read.Codec[ReviewPage]{reviewsCSV, reviewsNDJSON}
}

// partialFile marks a, a file of a search cut short by its budget, as
// not kept.
func partialFile(a *answer.Answer, partial bool) *answer.Answer {
	if a != nil && partial {
		a.NoStore, a.ETag = true, ""
	}
	return a
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
