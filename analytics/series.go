package analytics

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/series"
)

// ListingKey names a listing: its store and its id in the store.
type ListingKey struct {
	Store views.Store
	ID    string
}

// MaxSeriesListings is the most listings LoadDailyReadings reads at once.
const MaxSeriesListings = 10

// LoadDailyReadings reads the daily readings of each listing of keys (at
// most MaxSeriesListings) from day first to day last, both included: each
// UTC day's latest reading, oldest first, from series_daily (Crawls is not
// set: that table keeps one reading a day). A listing without readings in
// the window is absent from the map.
func LoadDailyReadings(ctx context.Context, conn driver.Conn, keys []ListingKey, first, last views.Day) (map[ListingKey][]series.Reading, error) {
	if len(keys) == 0 || len(keys) > MaxSeriesListings {
		return nil, fmt.Errorf("load daily readings: %d listings, want 1 to %d", len(keys), MaxSeriesListings)
	}
	var (
		conds []string
		args  []any
	)
	for _, k := range keys {
		conds = append(conds, "(store = ? AND id = ?)")
		args = append(args, uint8(k.Store), k.ID)
	}
	args = append(args, first.Time().Format(time.DateOnly), last.Time().Format(time.DateOnly))
	// series_daily holds each day's latest reading (more than one until
	// merged): the day's latest of them is the day's.
	rows, err := conn.Query(ctx, `
		SELECT store, id, day, toUInt64(0), max(crawled_at),
			`+latestNullable("usage", "crawled_at")+`, `+latestNullable("weekly_downloads", "crawled_at")+`,
			`+latestNullable("rating", "crawled_at")+`, `+latestNullable("rating_count", "crawled_at")+`
		FROM series_daily
		WHERE (`+strings.Join(conds, " OR ")+`) AND day >= toDate(?) AND day <= toDate(?)
		GROUP BY store, id, day ORDER BY store, id, day`, args...)
	if err != nil {
		return nil, fmt.Errorf("load daily readings: %w", err)
	}
	defer rows.Close()
	out := make(map[ListingKey][]series.Reading, len(keys))
	for rows.Next() {
		var (
			store             uint8
			id                string
			day, at           time.Time
			crawls            uint64
			usage, weekly, rc *uint64
			rating            *float64
		)
		if err := rows.Scan(&store, &id, &day, &crawls, &at, &usage, &weekly, &rating, &rc); err != nil {
			return nil, fmt.Errorf("load daily readings: %w", err)
		}
		k := ListingKey{views.Store(store), id}
		out[k] = append(out[k], series.Reading{Day: views.DayOf(day), At: at.UTC(), Crawls: int(crawls),
			Usage: i64(usage), WeeklyDownloads: i64(weekly), Rating: rating, RatingCount: i64(rc)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load daily readings: %w", err)
	}
	return out, nil
}

// LoadReadingsAround reads every reading of one listing that lies within
// gap seconds of one of the instants, oldest first, as series.AtInstant
// needs them (Day is each reading's UTC day; Crawls is not set).
func LoadReadingsAround(ctx context.Context, conn driver.Conn, k ListingKey, gap int64, instants ...time.Time) ([]series.Reading, error) {
	if len(instants) == 0 {
		return nil, nil
	}
	var (
		conds []string
		args  = []any{uint8(k.Store), k.ID}
	)
	for _, t := range instants {
		conds = append(conds, "(toUInt32(crawled_at) >= ? AND toUInt32(crawled_at) <= ?)")
		args = append(args, max(t.Unix()-gap, 0), t.Unix()+gap)
	}
	rows, err := conn.Query(ctx, `
		SELECT crawled_at, usage, weekly_downloads, rating, rating_count
		FROM snapshots WHERE store = ? AND id = ? AND (`+strings.Join(conds, " OR ")+`)
		ORDER BY crawled_at`, args...)
	if err != nil {
		return nil, fmt.Errorf("load readings around instants: %w", err)
	}
	defer rows.Close()
	var out []series.Reading
	for rows.Next() {
		var (
			at                time.Time
			usage, weekly, rc *uint64
			rating            *float64
		)
		if err := rows.Scan(&at, &usage, &weekly, &rating, &rc); err != nil {
			return nil, fmt.Errorf("load readings around instants: %w", err)
		}
		out = append(out, series.Reading{Day: views.DayOf(at), At: at.UTC(),
			Usage: i64(usage), WeeklyDownloads: i64(weekly), Rating: rating, RatingCount: i64(rc)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load readings around instants: %w", err)
	}
	return out, nil
}

// LoadRelistings returns the UTC days from day first on when the listing
// came back to its store: each metadata version that is live after a
// version that was delisted, oldest first.
func LoadRelistings(ctx context.Context, conn driver.Conn, store views.Store, id string, first views.Day) ([]views.Day, error) {
	rows, err := conn.Query(ctx, `
		SELECT crawled_at, isNotNull(delisted_at) FROM listings
		WHERE store = ? AND id = ? ORDER BY crawled_at`, uint8(store), id)
	if err != nil {
		return nil, fmt.Errorf("load relistings: %w", err)
	}
	defer rows.Close()
	var (
		days        []views.Day
		wasDelisted bool
	)
	for rows.Next() {
		var (
			at       time.Time
			delisted uint8
		)
		if err := rows.Scan(&at, &delisted); err != nil {
			return nil, fmt.Errorf("load relistings: %w", err)
		}
		if d := views.DayOf(at); wasDelisted && delisted == 0 && d >= first {
			days = append(days, d)
		}
		wasDelisted = delisted != 0
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load relistings: %w", err)
	}
	return days, nil
}
