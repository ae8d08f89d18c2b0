package analytics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/replica"
)

// The lake's reads (package lake writes what they stream as Parquet).
// Each streams one store in id order, a part of listings at a time
// (SplitParts), so ClickHouse groups and sorts one part's rows, never a
// whole store's history, and the edge holds one listing's rows at a time.

// StoreParts returns the parts of store s (SplitParts), in id order.
func StoreParts(ctx context.Context, conn driver.Conn, s views.Store, size int) ([]Part, error) {
	parts, _, err := splitParts(ctx, conn, size)
	if err != nil {
		return nil, err
	}
	var out []Part
	for _, p := range parts {
		if p.Store == s {
			out = append(out, p)
		}
	}
	return out, nil
}

// DayReading is a listing's reading of one UTC day (its latest of the
// day) with its store and category rank that day, when the day is ranked
// (0 when not, or when the listing was not ranked).
type DayReading struct {
	ID              string
	Day             views.Day
	At              time.Time
	Usage           *uint64
	WeeklyDownloads *uint64
	Rating          *float64
	RatingCount     *uint64
	Rank            uint32
	CategoryRank    uint32
}

// StreamDayReadings calls fn with every reading of the parts' listings
// from day from to day to (both included), by id then day. The day's
// reading and its ranks are two reads merged here, both sorted by (id,
// day): no join inside ClickHouse. fn must not keep the reading.
func StreamDayReadings(ctx context.Context, conn driver.Conn, parts []Part, from, to views.Day, fn func(*DayReading) error) error {
	for _, p := range parts {
		if err := streamPartReadings(ctx, conn, p, from, to, fn); err != nil {
			return fmt.Errorf("readings of %s: %w", p, err)
		}
	}
	return nil
}

func streamPartReadings(ctx context.Context, conn driver.Conn, p Part, from, to views.Day, fn func(*DayReading) error) error {
	where, args := p.where()
	// One day is read from snapshots, whose monthly partitions and key
	// (store, id, crawled_at) narrow it to the day's rows; many from
	// series_daily (the same rows, each day's latest kept).
	table, dayOf := "series_daily", "day"
	cond, bounds := " AND day >= toDate(?) AND day <= toDate(?)", []any{from.Time(), to.Time()}
	if from == to {
		table, dayOf = "snapshots", "toDate(crawled_at, 'UTC')"
		cond, bounds = " AND toUInt32(crawled_at) >= ? AND toUInt32(crawled_at) < ?", []any{from.Time().Unix(), (to + 1).Time().Unix()}
	}
	reads, err := conn.Query(ctx, `
		SELECT id, `+dayOf+` AS d, max(crawled_at), `+latestNullable("usage", "crawled_at")+`, `+latestNullable("weekly_downloads", "crawled_at")+`,
			`+latestNullable("rating", "crawled_at")+`, `+latestNullable("rating_count", "crawled_at")+`
		FROM `+table+` WHERE `+where+cond+`
		GROUP BY id, d ORDER BY id, d`, append(slices.Clip(args), bounds...)...)
	if err != nil {
		return err
	}
	defer reads.Close()
	ranks, err := conn.Query(ctx, `
		SELECT id, day, argMax(rank, version), argMax(category_rank, version)
		FROM daily_ranks WHERE `+where+` AND day >= toDate(?) AND day <= toDate(?)
		GROUP BY id, day ORDER BY id, day`, append(slices.Clip(args), from.Time(), to.Time())...)
	if err != nil {
		return err
	}
	defer ranks.Close()
	var (
		rid         string
		rday        time.Time
		rank, crank uint32
		pendingRank bool
		r           DayReading
		day         time.Time
	)
	nextRank := func() error {
		pendingRank = false
		if !ranks.Next() {
			return ranks.Err()
		}
		if err := ranks.Scan(&rid, &rday, &rank, &crank); err != nil {
			return err
		}
		pendingRank = true
		return nil
	}
	if err := nextRank(); err != nil {
		return err
	}
	for reads.Next() {
		r = DayReading{}
		if err := reads.Scan(&r.ID, &day, &r.At, &r.Usage, &r.WeeklyDownloads, &r.Rating, &r.RatingCount); err != nil {
			return err
		}
		r.Day, r.At = views.DayOf(day), r.At.UTC()
		// Ranks of days without a reading (none should be) are skipped.
		for pendingRank && (rid < r.ID || rid == r.ID && views.DayOf(rday) < r.Day) {
			if err := nextRank(); err != nil {
				return err
			}
		}
		if pendingRank && rid == r.ID && views.DayOf(rday) == r.Day {
			r.Rank, r.CategoryRank = rank, crank
			if err := nextRank(); err != nil {
				return err
			}
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
	return reads.Err()
}

// StreamListingChanges calls fn with the changes of each listing of the
// parts, a listing at a time in id order, from every metadata version
// crawled before end: the listing's changes in feed order with its
// takeovers (changes.Takeovers) among them. With since set, only the
// listings with a version crawled at or after it are read (all their
// versions: a takeover joins a change up to 90 days older). fn must not
// keep the slice.
func StreamListingChanges(ctx context.Context, conn driver.Conn, parts []Part, since, end time.Time, fn func(id string, cs []changes.Change) error) error {
	for _, p := range parts {
		var (
			cur string
			cs  []changes.Change
			err error
		)
		flush := func() {
			if err != nil || len(cs) == 0 {
				return
			}
			if ts := changes.Takeovers(cs); len(ts) > 0 {
				cs = mergeByPos(cs, ts)
			}
			err = fn(cur, cs)
		}
		sel := selectPart(p)
		sel = selection{"(" + sel.where + ") AND toUInt32(crawled_at) < ?", append(sel.args, end.Unix())}
		if !since.IsZero() {
			sel = selection{sel.where + " AND id IN (SELECT id FROM listings WHERE store = ? AND toUInt32(crawled_at) >= ? AND toUInt32(crawled_at) < ?)",
				append(sel.args, uint8(p.Store), since.Unix(), end.Unix())}
		}
		streamErr := streamVersions(ctx, conn, replica.NewInterner(), sel, func(s views.Store, id string, prev, next *changes.Meta) {
			if id != cur {
				flush()
				cur, cs = id, cs[:0]
			}
			cs = changes.Diff(cs, s, id, prev, next)
		})
		flush()
		if streamErr != nil {
			return fmt.Errorf("changes of %s: %w", p, streamErr)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// mergeByPos returns cs with ts merged in, both in feed order.
func mergeByPos(cs, ts []changes.Change) []changes.Change {
	out := make([]changes.Change, 0, len(cs)+len(ts))
	i := 0
	for _, t := range ts {
		for i < len(cs) && changes.PosOf(&cs[i]).Compare(changes.PosOf(&t)) < 0 {
			out = append(out, cs[i])
			i++
		}
		out = append(out, t)
	}
	return append(out, cs[i:]...)
}

// ReviewMeta is what the lake publishes of a stored review: no text and
// no author (docs/api-v1.md, The lake, says why), the text's length.
type ReviewMeta struct {
	ListingID string
	ReviewID  string
	PostedAt  time.Time
	Stars     uint8
	Lang      string
	TextChars uint64
	CrawledAt time.Time
}

// StreamReviewMeta calls fn with every review of the parts' listings
// read by a crawl in [from, to), each as its newest crawl then read it,
// by listing then review id.
func StreamReviewMeta(ctx context.Context, conn driver.Conn, parts []Part, from, to time.Time, fn func(*ReviewMeta) error) error {
	for _, p := range parts {
		where, args := p.whereOn("listing_id")
		args = append(args, max(from.Unix(), 0), to.Unix())
		rows, err := conn.Query(ctx, `
			SELECT listing_id, review_id, argMax(posted_at, crawled_at), argMax(stars, crawled_at), argMax(lang, crawled_at),
				argMax(lengthUTF8(text), crawled_at), max(crawled_at)
			FROM reviews WHERE `+where+` AND toUInt32(crawled_at) >= ? AND toUInt32(crawled_at) < ?
			GROUP BY listing_id, review_id ORDER BY listing_id, review_id`, args...)
		if err != nil {
			return fmt.Errorf("reviews of %s: %w", p, err)
		}
		var r ReviewMeta
		for rows.Next() {
			if err := rows.Scan(&r.ListingID, &r.ReviewID, &r.PostedAt, &r.Stars, &r.Lang, &r.TextChars, &r.CrawledAt); err != nil {
				rows.Close()
				return fmt.Errorf("reviews of %s: %w", p, err)
			}
			r.PostedAt, r.CrawledAt = r.PostedAt.UTC(), r.CrawledAt.UTC()
			if err := fn(&r); err != nil {
				rows.Close()
				return err
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("reviews of %s: %w", p, err)
		}
	}
	return nil
}
