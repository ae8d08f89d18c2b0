package analytics

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
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
	// Two aggregates joined, not scalar subqueries: those are Nullable on
	// current releases and plain on 18.16.
	err := conn.QueryRow(ctx, `SELECT l.m, s.m FROM (SELECT max(crawled_at) AS m FROM listings_latest) AS l
		CROSS JOIN (SELECT max(crawled_at) AS m FROM snapshots_latest) AS s`).
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

// upTo returns s limited to the metadata versions crawled at or before
// the listings bound of a (asOf).
func (s selection) upTo(a asOf) selection {
	return selection{"(" + s.where + ") AND toUInt32(crawled_at) <= ?", append(slices.Clip(s.args), a.listings)}
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
// figure at or before the window's start (one window before the listing's
// newest reading) and the oldest after it; the same around each end of
// the charts' window (info.ChartWindow); the size as of the climb
// reference time; and the readings of the sparkline
// days [firstDay, lastDay] (their times and sizes, a missing size as
// noSize), from which loadHistory keeps each day's latest with a size.
// The join is ALL, not ANY: the right side has one row a listing, and
// ANY INNER JOIN keeps one left row a key on current releases (every row
// on 18.16). Subqueries are named, as current releases require.
func historyQuery(where string, info replica.Info, firstDay, lastDay views.Day, a asOf) string {
	var cols []string
	// A base's value is read only where a reading matches (a NULL figure
	// never does), as a plain number: argMaxIf of a Nullable with no row
	// is 0 on ClickHouse 18.16 and NULL on current releases, so neither
	// is asked for; the base's time (0 for none) says whether there is one.
	add := func(value, cond string) {
		cond = fmt.Sprintf("%s AND isNotNull(%s)", cond, value)
		cols = append(cols,
			fmt.Sprintf("argMaxIf(assumeNotNull(%s), crawled_at, %s)", value, cond),
			fmt.Sprintf("maxIf(crawled_at, %s)", cond))
	}
	// The first reading after a window's start, for the value at the
	// start between it and the reading before (views.ValueAt).
	addAfter := func(value, cond string) {
		cond = fmt.Sprintf("%s AND isNotNull(%s)", cond, value)
		cols = append(cols,
			fmt.Sprintf("argMinIf(assumeNotNull(%s), crawled_at, %s)", value, cond),
			fmt.Sprintf("minIf(crawled_at, %s)", cond))
	}
	window := func(value string, w views.Window) {
		add(value, fmt.Sprintf("toUInt32(crawled_at) <= toUInt32(read_at) - %d", w.Days()*86400))
		addAfter(value, fmt.Sprintf("toUInt32(crawled_at) > toUInt32(read_at) - %d", w.Days()*86400))
	}
	for _, w := range views.Windows {
		window("size", w)
	}
	for _, w := range views.Windows[:2] {
		window("rating_count", w)
	}
	// The charts' window: the same two instants for every listing.
	chartFrom, chartTo := info.ChartWindow()
	for _, at := range [...]int64{chartFrom, chartTo} {
		add("size", fmt.Sprintf("toUInt32(crawled_at) <= %d", at))
		addAfter("size", fmt.Sprintf("toUInt32(crawled_at) > %d", at))
	}
	add("size", fmt.Sprintf("toUInt32(crawled_at) <= %d", info.ClimbAt.Unix()))
	cols = append(cols, "any(read_at)")
	spark := fmt.Sprintf("toUInt32(crawled_at) >= %d AND toUInt32(crawled_at) < %d", int64(firstDay)*86400, int64(lastDay+1)*86400)
	// Both arrays take the same rows in the same order, then both are
	// sorted by time (the order of a group's rows is the engine's: sorted,
	// the answer is the same on every release).
	times := fmt.Sprintf("groupArrayIf(toUInt32(crawled_at), %s)", spark)
	cols = append(cols, "arraySort("+times+")",
		fmt.Sprintf("arraySort((v, t) -> t, groupArrayIf(ifNull(size, %d), %s), %s)", uint64(noSize), spark, times))
	return `SELECT store, id, ` + strings.Join(cols, ",\n       ") + `
FROM (
    SELECT store, id, crawled_at, ` + sizeExpr + ` AS size, rating_count FROM snapshots
    WHERE (` + where + `) AND toUInt32(crawled_at) <= ` + strconv.FormatInt(a.readings, 10) + `
) AS history ALL INNER JOIN (
    ` + a.newestSQL(where) + `
) AS newest USING (store, id)
GROUP BY store, id`
}

// noSize stands for a reading without a size in the sparkline arrays of
// historyQuery.
const noSize = math.MaxUint64

// loadHistory fills the growth bases, chart sizes, climb bases and
// sparklines of the selected listings in b, in one scan of their history,
// as of the replica described by info: its climb reference time and
// charts' window; the sparkline covers the SparkDays UTC days ending on
// the day of its newest reading, each with the day's latest reading that
// has a size.
func loadHistory(ctx context.Context, conn driver.Conn, b *replica.Builder, sel selection, info replica.Info, a asOf) error {
	lastDay := views.DayOf(info.ReadingsMark)
	firstDay := lastDay - views.SparkDays + 1
	rows, err := conn.Query(ctx, historyQuery(sel.where, info, firstDay, lastDay, a), sel.twice()...)
	if err != nil {
		return fmt.Errorf("query growth bases: %w", err)
	}
	defer rows.Close()
	const (
		chartPairs = 2 * (len(views.Windows) + 2) // before and after each window's start
		pairs      = chartPairs + 4 + 1           // then around each end of the charts' window, and the climb's base
	)
	chartFrom, chartTo := info.ChartWindow()
	chartGap := views.GapFor(views.ChartDays * 86400)
	var (
		store  uint8
		id     string
		values [pairs]uint64
		times  [pairs]time.Time
		readAt time.Time
		at     []uint32
		sizes  []uint64
		dest   = []any{&store, &id}
		sp     sparkDays
	)
	for i := range values {
		dest = append(dest, &values[i], &times[i])
	}
	dest = append(dest, &readAt, &at, &sizes)
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return fmt.Errorf("scan growth bases: %w", err)
		}
		l := b.Find(views.Store(store), id)
		if l == nil {
			continue // arrived after the listings were read; the next refresh has it
		}
		reading := func(i int) views.Reading {
			if times[i].Unix() <= 0 {
				return views.Reading{}
			}
			return views.Reading{Value: int64(values[i]), At: times[i].Unix()}
		}
		// The windows start one window before the newest reading the query
		// saw; a reading read since the listing was (the next refresh's)
		// leaves them for the next refresh.
		start := func(pair int, w views.Window) views.Base {
			if readAt.Unix() != l.ReadAt {
				return views.Base{}
			}
			b, _ := views.ValueAt(l.ReadAt-int64(w.Days())*86400, reading(pair), reading(pair+1), w.MaxGap())
			return b
		}
		for i, w := range views.Windows {
			l.Hist.SetSizeBase(w, start(2*i, w))
		}
		for i, w := range views.Windows[:2] {
			l.Hist.SetRatingBase(w, start(2*(len(views.Windows)+i), w))
		}
		from, fromOK := views.ValueAt(chartFrom, reading(chartPairs), reading(chartPairs+1), chartGap)
		to, toOK := views.ValueAt(chartTo, reading(chartPairs+2), reading(chartPairs+3), chartGap)
		l.Hist.SetChartSizes(from, fromOK, to, toOK)
		climb := reading(pairs - 1)
		l.Hist.SetClimbBase(views.Base{Value: climb.Value, At: climb.At})
		// lc is the listing's newest reading, which its growth windows
		// end at: data, not the clock nor the data's now when it was read,
		// so every load of the same data says the same (the same bytes and
		// ETags on every edge), and a full reload changes no listing whose
		// readings did not.
		l.Hist.SetComputedAt(time.Unix(l.ReadAt, 0))
		if pts := sp.points(at, sizes); len(pts) > 0 {
			l.Hist.SetSparkline(views.EncodeSparkline(pts))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read growth bases: %w", err)
	}
	return nil
}

// sparkDays turns a listing's readings of the sparkline days into its
// points: each day's latest reading that has a size (of two at the same
// second, the larger), by day; days without one are left out. It reuses
// its buffers from one listing to the next.
type sparkDays struct {
	latest map[views.Day]int // day -> index of its latest reading
	pts    []views.SparkPoint
}

func (s *sparkDays) points(at []uint32, sizes []uint64) []views.SparkPoint {
	if s.latest == nil {
		s.latest = make(map[views.Day]int, views.SparkDays)
	}
	clear(s.latest)
	for i, t := range at {
		if sizes[i] == noSize {
			continue
		}
		d := views.Day(t / 86400)
		if k, ok := s.latest[d]; !ok || t > at[k] || (t == at[k] && sizes[i] > sizes[k]) {
			s.latest[d] = i
		}
	}
	s.pts = s.pts[:0]
	for d, i := range s.latest {
		s.pts = append(s.pts, views.SparkPoint{Day: d, Value: int64(sizes[i])})
	}
	slices.SortFunc(s.pts, func(a, b views.SparkPoint) int { return int(a.Day - b.Day) })
	return s.pts
}

// CountSnapshots returns the number of history records kept that were
// crawled at or before upTo: a state's count is as of its own newest
// reading (asOf), whatever was inserted since.
func CountSnapshots(ctx context.Context, conn driver.Conn, upTo time.Time) (int64, error) {
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM snapshots WHERE toUInt32(crawled_at) <= ?", upTo.Unix()).Scan(&n); err != nil {
		return 0, fmt.Errorf("count snapshots: %w", err)
	}
	return int64(n), nil
}
