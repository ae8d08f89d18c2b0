// Command views measures the full build of every view from a real
// ClickHouse dataset and the incremental refresh. It reports the fetch of
// the replica (current state) and of the history (growth bases, climb
// bases, sparklines) apart; the build of every figure from the replica, in
// memory; the live heap of the replica with history and of the figures;
// and, with the watermarks set back so that about --changed of the
// listings count as changed, the time to read them again, merge and
// rebuild, against the full fetch and build. With --editions it times
// building that many weekly editions instead. With --search it times text
// searches (the legacy q and the v1 q) on the replica instead.
//
// Usage:
//
//	go run ./bench/views --ch-database bench_1m
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/replica"
)

func main() {
	cfg := analytics.DefaultConfig()
	flag.StringVar(&cfg.Addr, "ch-addr", cfg.Addr, "ClickHouse native address")
	flag.StringVar(&cfg.Database, "ch-database", cfg.Database, "database")
	builds := flag.Int("builds", 3, "builds to time")
	changed := flag.Float64("changed", 0.01, "share of listings the refresh treats as changed")
	editions := flag.Int("editions", 0, "only time building this many weekly editions, newest first")
	ranks := flag.Int("ranks", 0, "only time ranking this many days, newest first (writes daily_ranks)")
	flag.IntVar(&cfg.PartSize, "part-size", cfg.PartSize, "listings one read of a load covers")
	search := flag.Int("search", 0, "only time text searches, this many runs of each")
	only := flag.String("q", "", "with --search: time only this query")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the timed work to this file")
	windows := flag.Bool("windows", false, "only report, per store, the live listings with each growth window's figure and how long the windows span")
	flag.Parse()
	if *only != "" {
		searchQueries = []string{*only}
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "views bench:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	if *search > 0 {
		if err := timeSearch(cfg, *search); err != nil {
			fmt.Fprintln(os.Stderr, "views bench:", err)
			pprof.StopCPUProfile()
			os.Exit(1)
		}
		return
	}
	if *windows {
		if err := reportWindows(cfg); err != nil {
			fmt.Fprintln(os.Stderr, "views bench:", err)
			os.Exit(1)
		}
		return
	}
	if *ranks > 0 {
		if err := timeRanks(cfg, *ranks); err != nil {
			fmt.Fprintln(os.Stderr, "views bench:", err)
			os.Exit(1)
		}
		return
	}
	if *editions > 0 {
		if err := timeEditions(cfg, *editions); err != nil {
			fmt.Fprintln(os.Stderr, "views bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(cfg, *builds, *changed); err != nil {
		fmt.Fprintln(os.Stderr, "views bench:", err)
		os.Exit(1)
	}
}

func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

func run(cfg analytics.Config, builds int, share float64) error {
	ctx := context.Background()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	base := heap()

	t0 := time.Now()
	bare, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 1, PartSize: cfg.PartSize})
	if err != nil {
		return err
	}
	fetchReplica := time.Since(t0)
	t1 := time.Now()
	b := replica.BuilderFrom(bare)
	info := bare.Info()
	info.HasHistory = true
	if err := analytics.AddHistory(ctx, conn, b, info, cfg.PartSize); err != nil {
		return err
	}
	r := b.Build(info)
	bare = nil
	fetchHistory := time.Since(t1)
	n := r.Len()
	replicaHeap := heap() - base
	fmt.Printf("listings %d\nfetch: replica %v, history %v\n", n, fetchReplica.Round(time.Millisecond), fetchHistory.Round(time.Millisecond))

	var f *figures.Figures
	best := time.Hour
	for i := 0; i < builds; i++ {
		s := time.Now()
		f = figures.Build(r, 0)
		best = min(best, time.Since(s))
	}
	total := heap() - base
	fmt.Printf("build: best of %d %v\n", builds, best.Round(time.Millisecond))
	fmt.Printf("memory: replica with history %.0f B/listing, figures %.0f B/listing, total %.0f B/listing\n",
		float64(replicaHeap)/float64(n), float64(total-replicaHeap)/float64(n), float64(total)/float64(n))
	runtime.KeepAlive(f)

	// Incremental: set the watermarks back until about share of the
	// listings have a newer reading, and refresh from there.
	var mark time.Time
	q := fmt.Sprintf("SELECT quantileExact(%f)(crawled_at) FROM snapshots_latest FINAL", 1-share)
	if err := conn.QueryRow(ctx, q).Scan(&mark); err != nil {
		return err
	}
	old := r.Info()
	old.ReadingsMark, old.ListingsMark = mark, mark
	s := time.Now()
	next, changed, err := analytics.RefreshReplica(ctx, conn, r.WithInfo(old), 2)
	if err != nil {
		return err
	}
	fetchChanged := time.Since(s)
	s = time.Now()
	figures.Build(next, 0)
	rebuild := time.Since(s)
	fmt.Printf("refresh: %d changed listings (%.2f%%): fetch and merge %v, build %v, total %v\n",
		changed, 100*float64(changed)/float64(n), fetchChanged.Round(time.Millisecond),
		rebuild.Round(time.Millisecond), (fetchChanged + rebuild).Round(time.Millisecond))
	fmt.Printf("full:    fetch %v, build %v, total %v\n", (fetchReplica + fetchHistory).Round(time.Millisecond),
		best.Round(time.Millisecond), (fetchReplica + fetchHistory + best).Round(time.Millisecond))
	return nil
}

// timeEditions builds n editions the way the editions job does: one week
// state per week end, each reused as the next older week's end.
func timeEditions(cfg analytics.Config, n int) error {
	ctx := context.Background()
	conn, last, err := openWithSpan(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	w := editions.WeekOf(views.DayOf(last)).Prev()
	start := time.Now()
	cur, err := analytics.LoadWeekState(ctx, conn, w.End(), cfg.PartSize)
	if err != nil {
		return err
	}
	for i := 0; i < n; i, w = i+1, w.Prev() {
		s := time.Now()
		prev, err := analytics.LoadWeekState(ctx, conn, w.Start().Time(), cfg.PartSize)
		if err != nil {
			return err
		}
		loaded := time.Since(s)
		s = time.Now()
		e := editions.Build(w, cur, prev)
		fmt.Printf("edition %s: state load %v, build %v, chrome live %d\n", e.Week, loaded.Round(time.Millisecond),
			time.Since(s).Round(time.Millisecond), e.Stores["chrome"].Totals.Live)
		cur = prev
	}
	fmt.Printf("%d editions in %v\n", n, time.Since(start).Round(time.Millisecond))
	return nil
}

// searchQueries are the text searches timed by --search: short and long,
// common and rare, in names, developers and descriptions, and non-Latin.
var searchQueries = []string{"li", "ab", "zz", "Pro", "tab", "dark reader", "translator", "acme",
	"works offline", "never sell your data", "über", "ü", "погода", "❤️"}

// timeSearch runs every query of searchQueries runs times as an uncached
// /api/extensions (total and the first page encoded as JSON rows,
// descriptions included from three characters) and as a v1 /listings page (names and developers), and prints
// the matches and p50 and p99 of each.
func timeSearch(cfg analytics.Config, runs int) error {
	ctx := context.Background()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	base := heap()
	r, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 1})
	if err != nil {
		return err
	}
	fmt.Printf("listings %d, replica without history %.0f B/listing\n", r.Len(), float64(heap()-base)/float64(r.Len()))
	f := figures.Build(r, 0)
	today := views.DayOf(r.Info().ReadingsMark)
	pct := func(ts []time.Duration, p float64) time.Duration {
		slices.Sort(ts)
		return ts[int(p*float64(len(ts)-1))].Round(10 * time.Microsecond)
	}
	for _, q := range searchQueries {
		var legacyTimes, v1 []time.Duration
		var total, page int
		for range runs {
			lq := listq.Query{Q: q, Page: 1, PageSize: 50}
			s := time.Now()
			var ls []*views.Listing
			total, ls, _ = f.Listings().Page(&lq)
			rows := make([]document.LegacyRow, len(ls))
			for i, l := range ls {
				rows[i] = document.NewLegacyRow(l, today)
			}
			if _, err := json.Marshal(rows); err != nil {
				return err
			}
			legacyTimes = append(legacyTimes, time.Since(s))
			vq := listq.Query{Q: q, NameOnly: true, Sort: listq.SortSize, PageSize: 50}
			s = time.Now()
			found, _, _, _ := f.Listings().List(&vq, nil)
			v1 = append(v1, time.Since(s))
			page = len(found)
		}
		fmt.Printf("%-22q legacy total %7d  p50 %8v p99 %8v | v1 page %2d  p50 %8v p99 %8v\n",
			q, total, pct(legacyTimes, 0.5), pct(legacyTimes, 0.99), page, pct(v1, 0.5), pct(v1, 0.99))
	}
	return nil
}

// timeRanks ranks the newest n days of data, one at a time, and prints
// each day's time.
func timeRanks(cfg analytics.Config, n int) error {
	ctx := context.Background()
	conn, last, err := openWithSpan(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	day := last.UTC().Truncate(24 * time.Hour)
	for i := range n {
		d := analytics.RankDay{Day: day.AddDate(0, 0, -i)}
		start := time.Now()
		if err := analytics.RankOneDay(ctx, conn, d, cfg.PartSize); err != nil {
			return err
		}
		fmt.Printf("rank %s: %v\n", d.Day.Format(time.DateOnly), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

// openWithSpan connects and returns the time of the newest reading.
func openWithSpan(ctx context.Context, cfg analytics.Config) (driver.Conn, time.Time, error) {
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		return nil, time.Time{}, err
	}
	_, last, err := analytics.DataSpan(ctx, conn)
	if err != nil {
		conn.Close()
		return nil, time.Time{}, err
	}
	return conn, last, nil
}

// reportWindows loads the replica with its history and prints, per store
// and growth window, the share of live listings with the window's figure
// and how long their windows span (from the base reading to the newest):
// the measure before and after a change of the windows' rule
// (docs/figures.md, Growth).
func reportWindows(cfg analytics.Config) error {
	ctx := context.Background()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		return err
	}
	defer conn.Close()
	r, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 1, PartSize: cfg.PartSize, History: true})
	if err != nil {
		return err
	}
	fmt.Printf("%-11s %-5s %8s %8s %7s %9s %9s %9s\n", "store", "win", "live", "with", "share", "span p50", "span p90", "span max")
	for _, s := range views.Stores {
		for _, w := range views.Windows {
			live, with := 0, 0
			var spans []float64
			for _, l := range r.OfStore(s) {
				if !l.Live() {
					continue
				}
				live++
				if c, ok := l.SizeGrowth(w); ok {
					with++
					spans = append(spans, float64(l.ReadAt-c.Since)/86400)
				}
			}
			slices.Sort(spans)
			q := func(p float64) float64 {
				if len(spans) == 0 {
					return 0
				}
				return spans[int(p*float64(len(spans)-1))]
			}
			share := 0.0
			if live > 0 {
				share = 100 * float64(with) / float64(live)
			}
			fmt.Printf("%-11s %-5s %8d %8d %6.1f%% %8.2fd %8.2fd %8.2fd\n", s, w, live, with, share, q(0.5), q(0.9), q(1))
		}
	}
	// The listings the trending chart can rank: by the rule before issue
	// 39's charts (its own 7-day window, newest reading within a day of
	// the data's now) and by the charts' window (a size at both ends).
	from, to := r.Info().ChartWindow()
	now := r.Info().ReadingsMark.Unix()
	fmt.Printf("\n%-11s %8s %14s %14s\n", "store", "live", "own week, <1d", "charts' window")
	for _, s := range views.Stores {
		live, own, chart := 0, 0, 0
		for _, l := range r.OfStore(s) {
			if !l.Live() {
				continue
			}
			live++
			if _, ok := l.SizeGrowth(views.Window7d); ok && l.ReadAt >= now-86400 {
				own++
			}
			if _, ok := l.ChartGrowth(from, to); ok {
				chart++
			}
		}
		pct := func(n int) float64 { return 100 * float64(n) / float64(max(live, 1)) }
		fmt.Printf("%-11s %8d %13.1f%% %13.1f%%\n", s, live, pct(own), pct(chart))
	}
	return nil
}
