package analytics

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
)

// Review is one stored review. Its text and author were written by a
// store user: data, never instructions.
type Review struct {
	ID       string    `json:"id"`
	PostedAt time.Time `json:"postedAt"`
	Stars    uint8     `json:"stars"`
	Author   string    `json:"author"`
	Lang     string    `json:"lang"`
	Text     string    `json:"text"`
}

// ReviewStars selects reviews by their stars.
type ReviewStars string

// The star groups: critical is 1 and 2 stars, positive 4 and 5; all
// includes 3.
const (
	StarsAll      ReviewStars = "all"
	StarsCritical ReviewStars = "critical"
	StarsPositive ReviewStars = "positive"
)

// ReviewQuery selects a page of one listing's reviews, newest first.
type ReviewQuery struct {
	Store     views.Store
	ListingID string
	Stars     ReviewStars
	Text      string // case-insensitive substring of the text; "" for all
	// After is the last review of the previous page: the page holds the
	// reviews posted before it (ties by review id, descending).
	AfterPosted time.Time
	AfterID     string
	Limit       int
	Budget      SearchBudget // bounds a search by Text; unused without
}

// LoadReviews reads one page of a listing's stored reviews, plus one more
// row to tell whether another page follows. Values are bound by the
// client, never spliced into the SQL. A search by text runs under
// q.Budget; partial is true when the budget stopped it, and the page then
// holds what was found until then.
//
// Reviews are read without FINAL, newest crawl first and one row per
// review (LIMIT 1 BY), so that ClickHouse can stop a search at its
// budget: FINAL in ClickHouse 18.16 ignores the row bound. Until
// ClickHouse merges a re-crawled review, a filter on stars or text tests
// each of its crawls, so a review edited since may match by its old text.
func LoadReviews(ctx context.Context, conn driver.Conn, q ReviewQuery) (out []Review, partial bool, err error) {
	var where []string
	args := []any{uint8(q.Store), q.ListingID}
	switch q.Stars {
	case StarsCritical:
		where = append(where, "stars <= 2")
	case StarsPositive:
		where = append(where, "stars >= 4")
	}
	if q.Text != "" {
		where = append(where, "positionCaseInsensitiveUTF8(text, ?) > 0")
		args = append(args, q.Text)
	}
	if q.AfterID != "" {
		where = append(where, "(toUInt32(posted_at) < ? OR (toUInt32(posted_at) = ? AND review_id < ?))")
		args = append(args, q.AfterPosted.Unix(), q.AfterPosted.Unix(), q.AfterID)
	}
	cond := ""
	if len(where) > 0 {
		cond = " AND " + strings.Join(where, " AND ")
	}
	settings := ""
	var run *budgetRun
	if q.Text != "" {
		settings = q.Budget.settings()
		ctx, run = q.Budget.start(ctx)
	}
	rows, err := conn.Query(ctx, `SELECT review_id, posted_at, stars, author, lang, text FROM reviews
		WHERE store = ? AND listing_id = ?`+cond+`
		ORDER BY posted_at DESC, review_id DESC, crawled_at DESC
		LIMIT 1 BY review_id LIMIT `+fmt.Sprint(q.Limit+1)+settings, args...)
	if err != nil {
		return nil, false, fmt.Errorf("query reviews of %s/%s: %w", q.Store, q.ListingID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Review
		if err := rows.Scan(&r.ID, &r.PostedAt, &r.Stars, &r.Author, &r.Lang, &r.Text); err != nil {
			return nil, false, fmt.Errorf("scan review: %w", err)
		}
		r.PostedAt = r.PostedAt.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("read reviews: %w", err)
	}
	return out, run != nil && run.partial(), nil
}
