package analytics_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/views"
)

// rankAll ranks every day DaysToRank lists and returns those days.
func rankAll(t *testing.T, conn driver.Conn, from time.Time) []analytics.RankDay {
	t.Helper()
	ctx := context.Background()
	days, err := analytics.DaysToRank(ctx, conn, from)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range days {
		if err := analytics.RankOneDay(ctx, conn, d, 0); err != nil {
			t.Fatal(err)
		}
	}
	return days
}

// TestDailyRanksRules checks the rank rules on rows built for them: the
// day's latest crawl counts, ties share a rank, a listing without a size
// has none, apple ranks by ratings, a listing not read on a day is ranked
// by its newest size of the 7 days before, a delisted one is not ranked;
// and the job's to-do list, where a late crawl makes the next days stale
// too.
func TestDailyRanksRules(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	ctx := context.Background()
	d1 := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
	d2 := d1.Add(24 * time.Hour)
	u := func(v uint64) *uint64 { return &v }
	snap := func(s views.Store, id string, at time.Time, usage, rc *uint64) analytics.SnapshotRow {
		return analytics.SnapshotRow{Store: s, ID: id, CrawledAt: at, Usage: usage, RatingCount: rc}
	}
	rows := []analytics.SnapshotRow{
		snap(views.Edge, "a", d1.Add(10*time.Hour), u(100), nil),
		snap(views.Edge, "a", d1.Add(20*time.Hour), u(50), nil), // the day's latest: 50
		snap(views.Edge, "b", d1.Add(9*time.Hour), u(50), nil),  // ties with a
		snap(views.Edge, "c", d1.Add(9*time.Hour), u(200), nil),
		snap(views.Edge, "d", d1.Add(9*time.Hour), nil, nil), // no size, no rank
		snap(views.Edge, "e", d1.Add(9*time.Hour), u(10), nil),
		snap(views.Apple, "x", d1.Add(9*time.Hour), u(1000), u(5)), // apple: ratings, not usage
		snap(views.Apple, "y", d1.Add(9*time.Hour), u(1), u(7)),
		snap(views.Edge, "a", d2.Add(1*time.Hour), u(300), nil),
		snap(views.Edge, "c", d2.Add(1*time.Hour), u(200), nil),
	}
	if err := analytics.WriteSnapshots(ctx, conn, rows); err != nil {
		t.Fatal(err)
	}
	// b leaves its store on day 2: ranked on day 1, not on day 2.
	gone := d2.Add(12 * time.Hour)
	if err := analytics.WriteListings(ctx, conn, []analytics.ListingRow{{Store: views.Edge, ID: "b", Name: "b",
		CrawledAt: gone, FirstSeen: d1.Add(-24 * time.Hour), DelistedAt: &gone}}); err != nil {
		t.Fatal(err)
	}
	days := rankAll(t, conn, d1)
	if len(days) != 2 || !days[0].Day.Equal(d2) || days[0].Crawls != 2 || !days[1].Day.Equal(d1) || days[1].Crawls != 8 {
		t.Fatalf("days to rank: %+v, want %s (2 crawls) then %s (8)", days, d2, d1)
	}
	if again, err := analytics.DaysToRank(ctx, conn, d1); err != nil || len(again) != 0 {
		t.Fatalf("after ranking, days to rank: %+v %v, want none", again, err)
	}
	want := map[string]map[string]int64{
		d1.Format(time.DateOnly): {"edge/a": 2, "edge/b": 2, "edge/c": 1, "edge/e": 4, "apple/x": 2, "apple/y": 1},
		// c and a read on day 2; e, x and y by their day-1 sizes; b delisted.
		d2.Format(time.DateOnly): {"edge/a": 1, "edge/c": 2, "edge/e": 3, "apple/x": 2, "apple/y": 1},
	}
	for day, ranks := range want {
		got := ranksOf(t, conn, day)
		if fmt.Sprint(got) != fmt.Sprint(ranks) {
			t.Errorf("ranks of %s: %v, want %v", day, got, ranks)
		}
	}
	// A late crawl of day 1 puts it back on the list.
	if err := analytics.WriteSnapshots(ctx, conn, []analytics.SnapshotRow{snap(views.Edge, "e", d1.Add(23*time.Hour), u(1000), nil)}); err != nil {
		t.Fatal(err)
	}
	days = rankAll(t, conn, d1)
	if len(days) != 2 || !days[0].Day.Equal(d2) || !days[1].Day.Equal(d1) {
		t.Fatalf("after a late crawl of day 1, days to rank: %+v, want %s and %s (which reads day 1)", days, d2, d1)
	}
	if got := ranksOf(t, conn, d1.Format(time.DateOnly)); got["edge/e"] != 1 || got["edge/c"] != 2 || got["edge/a"] != 3 {
		t.Errorf("ranks after the late crawl: %v", got)
	}
	if got := ranksOf(t, conn, d2.Format(time.DateOnly)); got["edge/e"] != 1 || got["edge/a"] != 2 || got["edge/c"] != 3 {
		t.Errorf("day 2 after the late crawl of day 1: %v", got)
	}

	// A day ranked by a release before category ranks (rule 0, its
	// newest ranking) is ranked again, and the days that read it.
	b, err := conn.PrepareBatch(ctx, "INSERT INTO daily_ranks_days (day, version, crawls)")
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Append(d1, uint64(time.Now().UnixNano()), days[1].Crawls); err != nil {
		t.Fatal(err)
	}
	if err := b.Send(); err != nil {
		t.Fatal(err)
	}
	if days = rankAll(t, conn, d1); len(days) != 2 {
		t.Fatalf("after a ranking of day 1 under the rule before, days to rank: %+v, want both", days)
	}
	if cat := categoryRanksOf(t, conn, d2.Format(time.DateOnly)); cat["edge/e"] != 1 || cat["edge/a"] != 2 || cat["apple/x"] != 2 {
		t.Errorf("category ranks of day 2 (every listing of a store in one category here): %v", cat)
	}

	h, err := analytics.LoadDailyHistory(ctx, conn, views.Edge, "a", d1, 2000)
	if err != nil {
		t.Fatal(err)
	}
	if h.Truncated || len(h.Snapshots) != 2 {
		t.Fatalf("history of a: %+v", h)
	}
	s1, s2 := h.Snapshots[0], h.Snapshots[1]
	if s1.Day != "2026-03-10" || s1.Crawls != 2 || *s1.Usage != 50 || *s1.Size != 50 || *s1.StoreRank != 3 || !s1.ReadAt.Equal(d1.Add(20*time.Hour)) {
		t.Errorf("day 1 of a: %+v", s1)
	}
	if s2.Day != "2026-03-11" || *s2.StoreRank != 2 || s2.CategoryRank == nil || *s2.CategoryRank != 2 || *s2.Usage != 300 {
		t.Errorf("day 2 of a: %+v", s2)
	}
	hd, err := analytics.LoadDailyHistory(ctx, conn, views.Edge, "d", d1, 2000)
	if err != nil || len(hd.Snapshots) != 1 || hd.Snapshots[0].StoreRank != nil || hd.Snapshots[0].Size != nil {
		t.Errorf("history of d (no size): %+v %v", hd, err)
	}
	hx, err := analytics.LoadDailyHistory(ctx, conn, views.Apple, "x", d1, 2000)
	if err != nil || len(hx.Snapshots) != 1 || *hx.Snapshots[0].Size != 5 || *hx.Snapshots[0].StoreRank != 2 {
		t.Errorf("history of apple x: %+v %v", hx, err)
	}
}

// ranksOf reads the ranks of one day as "store/id" -> rank.
func ranksOf(t *testing.T, conn driver.Conn, day string) map[string]int64 {
	return rankColumnOf(t, conn, "rank", day)
}

// rankColumnOf reads one rank column of daily_ranks on day as
// "store/id" -> rank.
func rankColumnOf(t *testing.T, conn driver.Conn, column, day string) map[string]int64 {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT store, id, argMax(`+column+`, version) FROM daily_ranks
		WHERE day = toDate(?) GROUP BY store, id`, day)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]int64{}
	for rows.Next() {
		var (
			s    uint8
			id   string
			rank uint32
		)
		if err := rows.Scan(&s, &id, &rank); err != nil {
			t.Fatal(err)
		}
		out[views.Store(s).String()+"/"+id] = int64(rank)
	}
	return out
}

// TestDailyRanksMatchReadings ranks a seeded dataset and compares one day
// with ranks computed here from the raw snapshots.
func TestDailyRanksMatchReadings(t *testing.T) {
	conn, _, _ := seededHistory(t)
	ctx := context.Background()
	days := rankAll(t, conn, time.Time{})
	if len(days) < 50 {
		t.Fatalf("ranked %d days, want the seeded 60", len(days))
	}
	day := days[len(days)/2].Day
	// The oracle: each day's latest reading of each listing; a listing's
	// size on day is the newest of those with a size in the 7 days up to
	// it; listings delisted by the end of day are left out.
	rows, err := conn.Query(ctx, `SELECT store, id, crawled_at, if(store = 3, rating_count, usage) FROM snapshots
		WHERE toDate(crawled_at, 'UTC') <= toDate(?) AND toDate(crawled_at, 'UTC') >= toDate(?) - 6`,
		day.Format(time.DateOnly), day.Format(time.DateOnly))
	if err != nil {
		t.Fatal(err)
	}
	type latest struct {
		at   time.Time
		size *uint64
	}
	dayLatest := map[string]latest{} // store/id/day -> the day's latest reading
	for rows.Next() {
		var (
			s    uint8
			id   string
			at   time.Time
			size *uint64
		)
		if err := rows.Scan(&s, &id, &at, &size); err != nil {
			t.Fatal(err)
		}
		k := views.Store(s).String() + "/" + id + "/" + at.UTC().Format(time.DateOnly)
		if cur, ok := dayLatest[k]; !ok || at.After(cur.at) {
			dayLatest[k] = latest{at, size}
		}
	}
	rows.Close()
	last := map[string]latest{} // store/id -> the newest day-latest reading with a size
	for k, l := range dayLatest {
		if l.size == nil {
			continue
		}
		id := k[:strings.LastIndex(k, "/")]
		if cur, ok := last[id]; !ok || l.at.After(cur.at) {
			last[id] = l
		}
	}
	// Each listing's category now, from its newest metadata row.
	rows, err = conn.Query(ctx, `SELECT store, id, category, isNotNull(delisted_at) AND toUInt32(assumeNotNull(delisted_at)) < ?
		FROM (SELECT * FROM listings ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id)`, day.Add(24*time.Hour).Unix())
	if err != nil {
		t.Fatal(err)
	}
	category := map[string]string{}
	for rows.Next() {
		var s, gone uint8
		var id, cat string
		if err := rows.Scan(&s, &id, &cat, &gone); err != nil {
			t.Fatal(err)
		}
		k := views.Store(s).String() + "/" + id
		category[k] = cat
		if gone == 1 {
			delete(last, k)
		}
	}
	rows.Close()
	sizes := map[string][]uint64{} // store, and store and category -> sizes
	for k, l := range last {
		st := k[:indexSlash(k)]
		sizes[st] = append(sizes[st], *l.size)
		sizes[st+"\x00"+category[k]] = append(sizes[st+"\x00"+category[k]], *l.size)
	}
	larger := func(among []uint64, size uint64) int64 {
		n := 0
		for _, s := range among {
			if s > size {
				n++
			}
		}
		return int64(n + 1)
	}
	want, wantCat := map[string]int64{}, map[string]int64{}
	for k, l := range last {
		st := k[:indexSlash(k)]
		want[k] = larger(sizes[st], *l.size)
		wantCat[k] = larger(sizes[st+"\x00"+category[k]], *l.size)
	}
	got := ranksOf(t, conn, day.Format(time.DateOnly))
	gotCat := categoryRanksOf(t, conn, day.Format(time.DateOnly))
	if len(got) != len(want) || len(want) < 200 || len(gotCat) != len(want) {
		t.Fatalf("ranked %d listings on %s (%d in their category), want %d", len(got), day, len(gotCat), len(want))
	}
	var bad []string
	for k, r := range want {
		if got[k] != r {
			bad = append(bad, fmt.Sprintf("%s: %d, want %d", k, got[k], r))
		}
		if gotCat[k] != wantCat[k] {
			bad = append(bad, fmt.Sprintf("%s in %q: %d, want %d", k, category[k], gotCat[k], wantCat[k]))
		}
	}
	slices.Sort(bad)
	if len(bad) > 0 {
		t.Errorf("%d ranks differ, e.g. %v", len(bad), bad[:min(5, len(bad))])
	}
	// Each category's totals that day are those of the listings ranked in it.
	checked := 0
	for k, ss := range sizes {
		st, cat, ok := strings.Cut(k, "\x00")
		if !ok || checked >= 6 {
			continue
		}
		store, _ := views.ParseStore(st)
		var total uint64
		for _, v := range ss {
			total += v
		}
		got, err := analytics.LoadCategoryWeeks(ctx, conn, store, cat, views.DayOf(day), views.DayOf(day))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Listings != int64(len(ss)) || got[0].TotalSize != int64(total) {
			t.Errorf("%s %q on %s: %+v, want %d listings of %d in all", st, cat, day.Format(time.DateOnly), got, len(ss), total)
		}
		checked++
	}
	checkPermissionCounts(t, conn, day)
	if n := len(slices.Collect(maps.Values(wantCat))); n < 2 {
		t.Errorf("the seeded day's category ranks take %d values", n)
	}
}

// categoryRanksOf reads the category ranks of one day as "store/id" ->
// rank.
func categoryRanksOf(t *testing.T, conn driver.Conn, day string) map[string]int64 {
	return rankColumnOf(t, conn, "category_rank", day)
}

func indexSlash(s string) int {
	for i := range s {
		if s[i] == '/' {
			return i
		}
	}
	return len(s)
}

// TestDailyHistoryTruncates keeps the newest days that fit in the crawl
// budget and says so.
func TestDailyHistoryTruncates(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	ctx := context.Background()
	d := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	var rows []analytics.SnapshotRow
	for day := range 3 {
		for k := range 5 {
			v := uint64(day*10 + k)
			rows = append(rows, analytics.SnapshotRow{Store: views.Firefox, ID: "busy",
				CrawledAt: d.Add(time.Duration(day)*24*time.Hour + time.Duration(k)*time.Hour), Usage: &v})
		}
	}
	if err := analytics.WriteSnapshots(ctx, conn, rows); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		max       int
		days      int
		truncated bool
	}{{15, 3, false}, {14, 2, true}, {10, 2, true}, {4, 0, true}} {
		h, err := analytics.LoadDailyHistory(ctx, conn, views.Firefox, "busy", d, c.max)
		if err != nil {
			t.Fatal(err)
		}
		if len(h.Snapshots) != c.days || h.Truncated != c.truncated {
			t.Errorf("max %d crawls: %d days truncated %v, want %d %v", c.max, len(h.Snapshots), h.Truncated, c.days, c.truncated)
		}
		if c.days > 0 && (h.Snapshots[len(h.Snapshots)-1].Day != "2026-04-03" || *h.Snapshots[len(h.Snapshots)-1].Usage != 24) {
			t.Errorf("max %d: newest day %+v, want 2026-04-03 with usage 24", c.max, h.Snapshots[len(h.Snapshots)-1])
		}
	}
}

// checkPermissionCounts holds the ranks job's permission counts of day to
// a count here of the listings' rows: each chrome and edge listing's
// newest metadata read by the day's end, not delisted by then.
func checkPermissionCounts(t *testing.T, conn driver.Conn, day time.Time) {
	t.Helper()
	end := day.Add(24 * time.Hour)
	rows, err := conn.Query(context.Background(), `SELECT store, id, crawled_at, permissions, delisted_at FROM listings WHERE store IN (0, 1)`)
	if err != nil {
		t.Fatal(err)
	}
	type version struct {
		at    time.Time
		perms []string
		gone  *time.Time
	}
	newest := map[string]version{}
	for rows.Next() {
		var (
			s  uint8
			id string
			v  version
		)
		if err := rows.Scan(&s, &id, &v.at, &v.perms, &v.gone); err != nil {
			t.Fatal(err)
		}
		k := fmt.Sprint(s, "/", id)
		if cur, ok := newest[k]; v.at.Before(end) && (!ok || v.at.After(cur.at)) {
			newest[k] = v
		}
	}
	rows.Close()
	want := map[string]int{}
	for _, v := range newest {
		if v.gone == nil || !v.gone.Before(end) {
			for _, p := range v.perms {
				want[p]++
			}
		}
	}
	got, err := analytics.LoadPermissionCounts(context.Background(), conn, views.DayOf(day))
	if err != nil {
		t.Fatal(err)
	}
	if len(want) < 5 || fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("permission counts of %s: %v, want %v", day.Format(time.DateOnly), got, want)
	}
}
