package analytics_test

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
)

func seededHistory(t *testing.T) (driver.Conn, *replica.Replica, *figures.Figures) {
	t.Helper()
	o := seed.Options{Seed: 11, Listings: 1200, Days: 60, ReviewsPerListing: 0,
		End: time.Date(2026, 7, 15, 9, 0, 0, 0, time.UTC)}
	conn := seededDB(t, o)
	ctx := context.Background()
	// Merge every part, as a long-running server eventually does: figures
	// must not depend on rows that merges fold away.
	onePartEach(t, conn, analytics.UpstreamTables)
	r, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 1, History: true})
	if err != nil {
		t.Fatal(err)
	}
	return conn, r, figures.Build(r, 0)
}

type reading struct {
	at   time.Time
	size *uint64
	rc   *uint64
}

// readings returns a listing's readings, oldest first, straight from the
// snapshots table.
func readings(t *testing.T, conn driver.Conn, l *views.Listing) []reading {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT crawled_at, usage, rating_count FROM snapshots
		WHERE store = ? AND id = ? ORDER BY crawled_at`, uint8(l.Store), l.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []reading
	for rows.Next() {
		var r reading
		var usage *uint64
		if err := rows.Scan(&r.at, &usage, &r.rc); err != nil {
			t.Fatal(err)
		}
		r.size = usage
		if l.Store == views.Apple {
			r.size = r.rc
		}
		out = append(out, r)
	}
	return out
}

// expectBase computes, in Go from the readings, the value of a figure at
// the start of a window of days ending with the newest reading, by the
// rule docs/figures.md states: the reading on the start, else the line
// between the readings around it (rounded to the nearest whole) when they
// lie at most maxGap apart, else none.
func expectBase(rs []reading, days int, maxGap time.Duration, figure func(reading) *uint64) views.Base {
	if len(rs) == 0 {
		return views.Base{}
	}
	return expectAt(rs, rs[len(rs)-1].at.Add(-time.Duration(days)*24*time.Hour), maxGap, figure)
}

// expectAt computes, in Go from the readings, the value of a figure at
// instant start by the same rule.
func expectAt(rs []reading, start time.Time, maxGap time.Duration, figure func(reading) *uint64) views.Base {
	var before, after *reading
	for i := range rs {
		if figure(rs[i]) == nil {
			continue
		}
		if !rs[i].at.After(start) {
			before = &rs[i]
		} else if after == nil {
			after = &rs[i]
		}
	}
	switch {
	case before == nil:
		return views.Base{}
	case before.at.Equal(start):
		return views.Base{Value: int64(*figure(*before)), At: before.at.Unix()}
	case after == nil || after.at.Sub(before.at) > maxGap:
		return views.Base{}
	}
	b, a := float64(*figure(*before)), float64(*figure(*after))
	v := b + (a-b)*start.Sub(before.at).Seconds()/after.at.Sub(before.at).Seconds()
	return views.Base{Value: int64(math.Round(v)), At: before.at.Unix(), After: after.at.Unix()}
}

func TestGrowthAndSparklinesMatchSQL(t *testing.T) {
	conn, r, _ := seededHistory(t)
	checked, withBase, withChart := 0, 0, 0
	interpolated := 0
	for _, l := range r.All() {
		if !l.Crawled() {
			continue
		}
		rs := readings(t, conn, &l)
		for _, w := range views.Windows {
			want := expectBase(rs, w.Days(), time.Duration(w.MaxGap())*time.Second, func(r reading) *uint64 { return r.size })
			if want.After != 0 {
				interpolated++
			}
			if got := l.Hist.SizeBase(w); got != want {
				t.Fatalf("%s/%s size base %s = %+v, want %+v", l.Store, l.ID, w, got, want)
			}
			if want.Valid() {
				withBase++
			}
		}
		for _, w := range views.Windows[:2] {
			want := expectBase(rs, w.Days(), time.Duration(w.MaxGap())*time.Second, func(r reading) *uint64 { return r.rc })
			if got := l.Hist.RatingBase(w); got != want {
				t.Fatalf("%s/%s rating base %s = %+v, want %+v", l.Store, l.ID, w, got, want)
			}
		}
		// The charts' window: the size at each of its two ends, by the
		// same rule with the 7-day gap, the same instants for everyone.
		from, to := r.Info().ChartWindow()
		gap := time.Duration(views.GapFor(views.ChartDays*86400)) * time.Second
		size := func(r reading) *uint64 { return r.size }
		start, end := expectAt(rs, time.Unix(from, 0), gap, size), expectAt(rs, time.Unix(to, 0), gap, size)
		g, ok := l.ChartGrowth(from, to)
		if wantOK := start.Valid() && end.Valid() && l.Live(); ok != wantOK || (ok && (g.Delta != end.Value-start.Value || g.Base.Value != start.Value)) {
			t.Fatalf("%s/%s chart growth %+v %v, want from %+v to %+v", l.Store, l.ID, g, ok, start, end)
		}
		if ok {
			withChart++
		}
		// Climb base: the newest reading with a size at or before the climb time.
		climbAt := r.Info().ClimbAt
		var want views.Base
		for _, rd := range rs {
			if rd.size != nil && !rd.at.After(climbAt) {
				want = views.Base{Value: int64(*rd.size), At: rd.at.Unix()}
			}
		}
		if got := l.Hist.ClimbBase(); got != want {
			t.Fatalf("%s/%s climb base %+v, want %+v", l.Store, l.ID, got, want)
		}
		// Sparkline: each day's latest reading with a size, over the last 90 days.
		lastDay := views.DayOf(r.Info().ReadingsMark)
		byDay := map[views.Day]int64{}
		for _, rd := range rs {
			if d := views.DayOf(rd.at); rd.size != nil && d > lastDay-views.SparkDays {
				byDay[d] = int64(*rd.size) // readings are oldest first: the day's latest wins
			}
		}
		got := map[views.Day]int64{}
		l.Hist.Sparkline(func(p views.SparkPoint) { got[p.Day] = p.Value })
		if fmt.Sprint(got) != fmt.Sprint(byDay) {
			t.Fatalf("%s/%s sparkline %v, want %v", l.Store, l.ID, got, byDay)
		}
		checked++
	}
	if checked < 100 || withBase < 100 || withChart < 100 || interpolated == 0 {
		t.Fatalf("checked %d listings, %d bases, %d chart windows, %d interpolated", checked, withBase, withChart, interpolated)
	}
}

func TestRanksMatchSQL(t *testing.T) {
	conn, r, f := seededHistory(t)
	// Rank by direct SQL: 1 + live listings of the store that are larger (ties share a rank).
	q := `SELECT store, id, size FROM (
		SELECT store, id, delisted_at FROM (SELECT * FROM listings ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id)
	) ANY INNER JOIN (
		SELECT store, id, if(store = 3, rating_count, usage) AS size
		FROM (SELECT * FROM snapshots ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id)
	) USING (store, id)
	WHERE isNull(delisted_at) AND isNotNull(size)`
	rows, err := conn.Query(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	type row struct {
		id   string
		size uint64
	}
	live := map[views.Store][]row{}
	for rows.Next() {
		var s uint8
		var rw row
		var size *uint64
		if err := rows.Scan(&s, &rw.id, &size); err != nil {
			t.Fatal(err)
		}
		rw.size = *size
		live[views.Store(s)] = append(live[views.Store(s)], rw)
	}
	checked := 0
	for s, rs := range live {
		for i, me := range rs {
			if i%5 != 0 {
				continue
			}
			want := 1
			for _, o := range rs {
				if o.size > me.size {
					want++
				}
			}
			got, _, _, _ := f.Ranks(r.Lookup(s, me.id))
			if got != want {
				t.Fatalf("%s/%s rank %d, want %d", s, me.id, got, want)
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("checked %d ranks", checked)
	}
}

func TestEditionMatchesSQL(t *testing.T) {
	conn, _, _ := seededHistory(t)
	ctx := context.Background()
	w, _ := editions.ParseWeek("2026-W27") // 2026-06-29 to 2026-07-05, inside the data
	cur, err := analytics.LoadWeekState(ctx, conn, w.End(), 0)
	if err != nil {
		t.Fatal(err)
	}
	prev, err := analytics.LoadWeekState(ctx, conn, w.Start().Time(), 0)
	if err != nil {
		t.Fatal(err)
	}
	e := editions.Build(w, cur, prev)
	end, start := w.End().Unix(), w.Start().Time().Unix()
	lookback := end - int64(analytics.WeekLookback/time.Second)
	// Totals by direct SQL, with newest rows chosen by ORDER BY ... LIMIT 1 BY.
	// Live: listed at the instant and read in the lookback before it, with
	// or without a size; totalSize sums the newest size of those with one.
	q := fmt.Sprintf(`SELECT store,
		countIf(first_seen < toDateTime(%[1]d) AND (isNull(delisted_at) OR delisted_at >= toDateTime(%[1]d)) AND has = 1),
		sumIf(size, first_seen < toDateTime(%[1]d) AND (isNull(delisted_at) OR delisted_at >= toDateTime(%[1]d)) AND has = 1),
		countIf(first_seen >= toDateTime(%[3]d) AND first_seen < toDateTime(%[1]d) AND has = 1
			AND (isNull(delisted_at) OR delisted_at >= toDateTime(%[1]d)))
	FROM (
		SELECT store, id, first_seen, delisted_at, has FROM (
			SELECT store, id, first_seen, delisted_at FROM (
				SELECT * FROM listings WHERE crawled_at < toDateTime(%[1]d) ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id)
		) ANY LEFT JOIN (
			SELECT store, id, toUInt8(1) AS has FROM snapshots
			WHERE crawled_at < toDateTime(%[1]d) AND crawled_at >= toDateTime(%[2]d) GROUP BY store, id
		) USING (store, id)
	) ANY LEFT JOIN (
		SELECT store, id, assumeNotNull(if(store = 3, rating_count, usage)) AS size FROM (
			SELECT * FROM snapshots WHERE crawled_at < toDateTime(%[1]d) AND crawled_at >= toDateTime(%[2]d)
				AND isNotNull(if(store = 3, rating_count, usage))
			ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id)
	) USING (store, id)
	GROUP BY store`, end, lookback, start)
	rows, err := conn.Query(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	stores := 0
	for rows.Next() {
		var s uint8
		var live, newcomers uint64
		var size uint64
		if err := rows.Scan(&s, &live, &size, &newcomers); err != nil {
			t.Fatal(err)
		}
		tot := e.Stores[views.Store(s).String()].Totals
		if tot.Live != int(live) || tot.TotalSize != int64(size) || tot.Newcomers != int(newcomers) {
			t.Errorf("%s totals %+v, SQL live %d size %d newcomers %d", views.Store(s), tot, live, size, newcomers)
		}
		if live == 0 {
			t.Errorf("%s has no live listings at the end of %s", views.Store(s), w)
		}
		stores++
	}
	if stores != 5 {
		t.Fatalf("%d stores", stores)
	}
}

// TestHistoryEdgeCases writes readings by hand: a base exactly one window
// old, several crawls in one UTC day, a listing with a single reading.
func TestHistoryEdgeCases(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	ctx := context.Background()
	now := time.Date(2026, 5, 20, 12, 0, 0, 0, time.UTC)
	u := func(v uint64) *uint64 { return &v }
	write := func(ls []analytics.ListingRow, ss []analytics.SnapshotRow) {
		t.Helper()
		if err := analytics.WriteListings(ctx, conn, ls); err != nil {
			t.Fatal(err)
		}
		if err := analytics.WriteSnapshots(ctx, conn, ss); err != nil {
			t.Fatal(err)
		}
	}
	meta := func(id string) analytics.ListingRow {
		return analytics.ListingRow{Store: views.Edge, ID: id, CrawledAt: now.Add(-30 * 24 * time.Hour),
			Name: id, FirstSeen: now.Add(-60 * 24 * time.Hour)}
	}
	write([]analytics.ListingRow{meta("boundary"), meta("single"), meta("sameday")}, []analytics.SnapshotRow{
		// boundary: a reading exactly 1 day and exactly 7 days before the newest.
		{Store: views.Edge, ID: "boundary", CrawledAt: now.Add(-7 * 24 * time.Hour), Usage: u(70)},
		{Store: views.Edge, ID: "boundary", CrawledAt: now.Add(-7*24*time.Hour + time.Second), Usage: u(71)},
		{Store: views.Edge, ID: "boundary", CrawledAt: now.Add(-24 * time.Hour), Usage: u(90)},
		{Store: views.Edge, ID: "boundary", CrawledAt: now.Add(-24*time.Hour + time.Second), Usage: u(91)},
		{Store: views.Edge, ID: "boundary", CrawledAt: now, Usage: u(100)},
		// single: one reading, so no growth at all.
		{Store: views.Edge, ID: "single", CrawledAt: now, Usage: u(5)},
		// sameday: three crawls on one UTC day, then one the next day; the middle one lacks a figure.
		{Store: views.Edge, ID: "sameday", CrawledAt: now.Add(-36 * time.Hour), Usage: u(10)},
		{Store: views.Edge, ID: "sameday", CrawledAt: now.Add(-30 * time.Hour), Usage: u(20)},
		{Store: views.Edge, ID: "sameday", CrawledAt: now.Add(-26 * time.Hour)},
		{Store: views.Edge, ID: "sameday", CrawledAt: now, Usage: u(40)},
	})
	r, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 1, History: true})
	if err != nil {
		t.Fatal(err)
	}
	b := r.Lookup(views.Edge, "boundary")
	if g, ok := b.SizeGrowth(views.Window1d); !ok || g.Delta != 10 || g.Since != now.Add(-24*time.Hour).Unix() {
		t.Errorf("1d growth from a base exactly one day old: %+v %v", g, ok)
	}
	if g, ok := b.SizeGrowth(views.Window7d); !ok || g.Delta != 30 || g.Percent != 30.0/70*100 {
		t.Errorf("7d growth from a base exactly seven days old: %+v %v", g, ok)
	}
	if _, ok := b.SizeGrowth(views.Window30d); ok {
		t.Error("30d growth without a reading that old")
	}
	s := r.Lookup(views.Edge, "single")
	for _, w := range views.Windows {
		if _, ok := s.SizeGrowth(w); ok {
			t.Errorf("single reading has %s growth", w)
		}
	}
	var points []views.SparkPoint
	r.Lookup(views.Edge, "sameday").Hist.Sparkline(func(p views.SparkPoint) { points = append(points, p) })
	today := views.DayOf(now)
	if len(points) != 2 || points[0] != (views.SparkPoint{Day: today - 1, Value: 20}) || points[1] != (views.SparkPoint{Day: today, Value: 40}) {
		t.Errorf("sparkline %v, want the day's latest reading with a figure: 20 then 40", points)
	}
}

// TestTotalSizeWeekAgoMatchesSQL: a store's totalSize7dAgo is the sum, over
// the listings live at the climb's reference time, of their newest size
// then, by direct SQL; and totalSizeChange7d is totalSize minus it.
func TestTotalSizeWeekAgoMatchesSQL(t *testing.T) {
	conn, r, f := seededHistory(t)
	at := r.Info().ClimbAt.Unix()
	rows, err := conn.Query(context.Background(), fmt.Sprintf(`SELECT store, sum(size) FROM (
		SELECT store, id FROM (SELECT * FROM listings ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id)
		WHERE toUInt32(first_seen) <= %[1]d AND (isNull(delisted_at) OR toUInt32(assumeNotNull(delisted_at)) > %[1]d)
	) ANY INNER JOIN (
		SELECT store, id, argMax(assumeNotNull(if(store = 3, rating_count, usage)), crawled_at) AS size FROM snapshots
		WHERE toUInt32(crawled_at) <= %[1]d AND isNotNull(if(store = 3, rating_count, usage)) GROUP BY store, id
	) USING (store, id) GROUP BY store`, at))
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var s uint8
		var sum uint64
		if err := rows.Scan(&s, &sum); err != nil {
			t.Fatal(err)
		}
		st := f.Stats(views.Store(s))
		if st.TotalSize7dAgo != int64(sum) || st.TotalSizeChange7d != st.TotalSize-st.TotalSize7dAgo {
			t.Errorf("%s: totalSize7dAgo %d (SQL %d), totalSize %d, change %d", views.Store(s), st.TotalSize7dAgo, sum, st.TotalSize, st.TotalSizeChange7d)
		}
		n++
	}
	if n != 5 {
		t.Fatalf("%d stores", n)
	}
}
