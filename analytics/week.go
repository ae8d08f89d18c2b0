package analytics

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/replica"
)

// WeekLookback bounds how far back a week state looks for a listing's
// reading: a listing not read in the 30 days before the instant counts as
// not live then. The bound keeps each edition's scan to about a month of
// snapshots.
const WeekLookback = 30 * 24 * time.Hour

// LoadWeekState reads the state of every listing at instant at, from the
// data written before it only: the newest metadata version crawled before
// at, and the newest reading with each figure in the lookback before at.
// The same data always gives the same state, on every edge. It reads one
// part of about partSize listings at a time (SplitParts).
func LoadWeekState(ctx context.Context, conn driver.Conn, at time.Time, partSize int) (*editions.State, error) {
	parts, err := SplitParts(ctx, conn, partSize)
	if err != nil {
		return nil, err
	}
	st := &editions.State{At: at.UTC()}
	in := replica.NewInterner()
	for _, p := range parts {
		if err := loadWeekPart(ctx, conn, st, in, selectPart(p)); err != nil {
			return nil, fmt.Errorf("part %s: %w", p, err)
		}
	}
	return st, nil
}

// loadWeekPart appends the state of the selected listings at st.At to st,
// sorted by store and id.
func loadWeekPart(ctx context.Context, conn driver.Conn, st *editions.State, in *replica.Interner, sel selection) error {
	at := st.At
	end, from := at.Unix(), at.Add(-WeekLookback).Unix()
	q := fmt.Sprintf(`
SELECT store, id, name, category, first_seen, delisted, has_reading, read_at, size, rating, rating_count
FROM (
    SELECT store, id, argMax(name, crawled_at) AS name, argMax(category, crawled_at) AS category,
           argMax(first_seen, crawled_at) AS first_seen,
           `+latestNullable("delisted_at", "crawled_at")+` AS delisted
    FROM listings WHERE toUInt32(crawled_at) < %[1]d AND %[4]s
    GROUP BY store, id
) AS meta ANY LEFT JOIN (
    SELECT store, id, toUInt8(1) AS has_reading, max(crawled_at) AS read_at,
           argMax(size, crawled_at) AS size, argMax(rating, crawled_at) AS rating,
           argMax(rating_count, crawled_at) AS rating_count
    FROM (
        SELECT store, id, crawled_at, %[3]s AS size, rating, rating_count FROM snapshots
        WHERE toUInt32(crawled_at) < %[1]d AND toUInt32(crawled_at) >= %[2]d AND %[4]s
    )
    GROUP BY store, id
) AS reading USING (store, id)`, end, from, sizeExpr, sel.where)
	rows, err := conn.Query(ctx, q, sel.twice()...)
	if err != nil {
		return fmt.Errorf("query state at %s: %w", at.Format(time.RFC3339), err)
	}
	defer rows.Close()
	n := len(st.Listings)
	var (
		store, hasReading  uint8
		id, name, category string
		firstSeen, readAt  time.Time
		delisted           *time.Time
		size, ratingCount  *uint64
		rating             *float64
	)
	for rows.Next() {
		if err := rows.Scan(&store, &id, &name, &category, &firstSeen, &delisted, &hasReading, &readAt,
			&size, &rating, &ratingCount); err != nil {
			return fmt.Errorf("scan state: %w", err)
		}
		l := editions.Listing{Store: views.Store(store), ID: id, Name: name, Category: in.String(category),
			FirstSeen: firstSeen.Unix()}
		if delisted != nil {
			l.Delisted = delisted.Unix()
		}
		if hasReading != 0 {
			l.ReadAt = readAt.Unix()
			if size != nil {
				l.Size, l.HasSize = int64(*size), true
			}
			if rating != nil {
				l.Rating, l.Rated = *rating, true
			}
			if ratingCount != nil {
				l.RatingCount = int64(*ratingCount)
			}
		}
		st.Listings = append(st.Listings, l)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read state: %w", err)
	}
	slices.SortFunc(st.Listings[n:], func(a, b editions.Listing) int {
		return cmp.Or(cmp.Compare(a.Store, b.Store), cmp.Compare(a.ID, b.ID))
	})
	return nil
}

// DataSpan returns the times of the oldest and newest readings.
func DataSpan(ctx context.Context, conn driver.Conn) (first, last time.Time, err error) {
	err = conn.QueryRow(ctx, "SELECT min(crawled_at), max(crawled_at) FROM snapshots").Scan(&first, &last)
	if err != nil {
		return first, last, fmt.Errorf("read data span: %w", err)
	}
	return first.UTC(), last.UTC(), nil
}
