package analytics

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
)

// Watermarks say how far a load has read: the newest crawled_at seen in the
// listings table and among the newest readings.
type Watermarks struct {
	Listings time.Time
	Readings time.Time
}

// ReadWatermarks returns the current watermarks. Read them before loading,
// so that a row that arrives during the load is picked up by the next
// incremental refresh.
func ReadWatermarks(ctx context.Context, conn driver.Conn) (Watermarks, error) {
	var w Watermarks
	err := conn.QueryRow(ctx, `SELECT (SELECT max(crawled_at) FROM listings_latest), (SELECT max(crawled_at) FROM snapshots_latest)`).
		Scan(&w.Listings, &w.Readings)
	if err != nil {
		return w, fmt.Errorf("read watermarks: %w", err)
	}
	w.Listings, w.Readings = w.Listings.UTC(), w.Readings.UTC()
	return w, nil
}

// A selection is a condition on (store, id) that picks the listings a read
// covers, with its arguments: a part of a full load, or the listings
// changed since an incremental refresh's watermarks.
type selection struct {
	where string
	args  []any
}

// twice returns the arguments for a query that puts the condition on both
// sides of a join.
func (s selection) twice() []any { return append(slices.Clip(s.args), s.args...) }

// selectPart selects the listings of part p.
func selectPart(p Part) selection {
	where, args := p.where()
	return selection{where, args}
}

// changedSince selects listings whose metadata or newest reading is newer
// than w. The set it builds inside ClickHouse grows with the changes, not
// with the listings.
func changedSince(w Watermarks) selection {
	return selection{`(store, id) IN (
		SELECT store, id FROM listings_latest WHERE toUInt32(crawled_at) > ?
		UNION ALL
		SELECT store, id FROM snapshots_latest WHERE toUInt32(crawled_at) > ?)`,
		[]any{w.Listings.Unix(), w.Readings.Unix()}}
}

// sizeExpr is a listing's size: its usage figure, or on apple (store 3) its
// rating count.
const sizeExpr = "if(store = 3, rating_count, usage)"

// historyQuery finds, in one scan of the snapshots, every growth base of
// every selected listing: for each window, the newest reading with the
// figure at least one window older than the listing's newest reading; and
// the size as of the climb reference time. Aggregates skip NULL figures,
// matching the isNotNull conditions on the base times.
func historyQuery(where string, climbAt int64) string {
	var cols []string
	add := func(value, cond string) {
		cols = append(cols,
			fmt.Sprintf("argMaxIf(%s, crawled_at, %s)", value, cond),
			fmt.Sprintf("maxIf(crawled_at, %s AND isNotNull(%s))", cond, value))
	}
	for _, w := range views.Windows {
		add("size", fmt.Sprintf("toUInt32(crawled_at) <= toUInt32(read_at) - %d", w.Days()*86400))
	}
	for _, w := range views.Windows[:2] {
		add("rating_count", fmt.Sprintf("toUInt32(crawled_at) <= toUInt32(read_at) - %d", w.Days()*86400))
	}
	add("size", fmt.Sprintf("toUInt32(crawled_at) <= %d", climbAt))
	return `SELECT store, id, ` + strings.Join(cols, ",\n       ") + `
FROM (
    SELECT store, id, crawled_at, ` + sizeExpr + ` AS size, rating_count FROM snapshots WHERE ` + where + `
) ANY INNER JOIN (
    SELECT store, id, crawled_at AS read_at FROM snapshots_latest FINAL WHERE ` + where + `
) USING (store, id)
GROUP BY store, id`
}

// loadHistory fills the growth and climb bases of the selected listings
// in b. climbAt is the reference time of the 7-day rank climb.
func loadHistory(ctx context.Context, conn driver.Conn, b *views.ReplicaBuilder, sel selection, climbAt time.Time) error {
	rows, err := conn.Query(ctx, historyQuery(sel.where, climbAt.Unix()), sel.twice()...)
	if err != nil {
		return fmt.Errorf("query growth bases: %w", err)
	}
	defer rows.Close()
	var (
		store    uint8
		id       string
		values   [7]*uint64
		times    [7]time.Time
		dest     = []any{&store, &id}
		computed = time.Now()
	)
	for i := range values {
		dest = append(dest, &values[i], &times[i])
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("scan growth bases: %w", err)
		}
		l := b.Find(views.Store(store), id)
		if l == nil {
			continue // arrived after the listings were read; the next refresh has it
		}
		base := func(i int) views.Base {
			if values[i] == nil || times[i].Unix() <= 0 {
				return views.Base{}
			}
			return views.Base{Value: int64(*values[i]), At: times[i].Unix()}
		}
		for i, w := range views.Windows {
			l.Hist.SetSizeBase(w, base(i))
		}
		l.Hist.SetRatingBase(views.Window1d, base(4))
		l.Hist.SetRatingBase(views.Window7d, base(5))
		l.Hist.SetClimbBase(base(6))
		l.Hist.SetComputedAt(computed)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read growth bases: %w", err)
	}
	return nil
}

// loadSparklines fills the sparkline of the selected listings in b: for
// each UTC day of the SparkDays days ending on lastDay, the day's latest
// reading that has a size.
func loadSparklines(ctx context.Context, conn driver.Conn, b *views.ReplicaBuilder, sel selection, lastDay views.Day) error {
	first := lastDay - views.SparkDays + 1
	q := `SELECT store, id, groupArray(d), groupArray(v) FROM (
    SELECT store, id, toUInt32(day) AS d, assumeNotNull(argMax(` + sizeExpr + `, crawled_at)) AS v
    FROM snapshots_daily
    WHERE toUInt32(day) >= ? AND toUInt32(day) <= ? AND ` + sel.where + `
    GROUP BY store, id, day
    HAVING isNotNull(argMax(` + sizeExpr + `, crawled_at))
) GROUP BY store, id`
	rows, err := conn.Query(ctx, q, append([]any{uint32(first), uint32(lastDay)}, sel.args...)...)
	if err != nil {
		return fmt.Errorf("query sparklines: %w", err)
	}
	defer rows.Close()
	var (
		store  uint8
		id     string
		days   []uint32
		vals   []uint64
		points []views.SparkPoint
	)
	for rows.Next() {
		if err := rows.Scan(&store, &id, &days, &vals); err != nil {
			return fmt.Errorf("scan sparkline: %w", err)
		}
		l := b.Find(views.Store(store), id)
		if l == nil {
			continue
		}
		points = points[:0]
		for i := range days {
			points = append(points, views.SparkPoint{Day: views.Day(days[i]), Value: int64(vals[i])})
		}
		slices.SortFunc(points, func(a, b views.SparkPoint) int { return int(a.Day - b.Day) })
		l.Hist.SetSparkline(views.EncodeSparkline(points))
		days, vals = nil, nil
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read sparklines: %w", err)
	}
	return nil
}

// CountSnapshots returns the number of history records kept.
func CountSnapshots(ctx context.Context, conn driver.Conn) (int64, error) {
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM snapshots").Scan(&n); err != nil {
		return 0, fmt.Errorf("count snapshots: %w", err)
	}
	return int64(n), nil
}
