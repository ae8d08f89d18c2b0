// Command usagesync measures the usage sync with many callers: two edges
// (two limiters in this process, each with its own name in the usage log)
// share one ClickHouse database; in rounds paced at the sync interval,
// each admits calls of new callers (and of callers seen before) and then
// syncs. It reports the syncs' latency (median, p99, max), the calls
// refused because the totals were stale (503), the rows the last sync
// read, the time of a whole-day read (what an edge pays when it starts),
// and the memory a caller takes in an edge's day totals.
//
//	go run ./bench/usagesync --ch-addr 127.0.0.1:19000 --callers 1000000
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/ratelimit"
)

func main() {
	cfg := analytics.DefaultConfig()
	cfg.Database = "bench_usage"
	callers := flag.Int("callers", 1_000_000, "distinct callers in the day, over both edges")
	rounds := flag.Int("rounds", 150, "rounds of calls, each followed by a sync of both edges")
	every := flag.Duration("every", 2*time.Second, "pace of the rounds (the sync interval)")
	flag.StringVar(&cfg.Addr, "ch-addr", cfg.Addr, "ClickHouse native address")
	flag.StringVar(&cfg.Database, "ch-database", cfg.Database, "database (dropped and made again)")
	flag.Parse()
	if err := run(cfg, *callers, *rounds, *every); err != nil {
		fmt.Fprintln(os.Stderr, "usagesync bench:", err)
		os.Exit(1)
	}
}

// caller returns the i-th caller: an IPv6 /64 of its own.
func caller(i int) limits.Subject {
	var b [16]byte
	b[0], b[1] = 0x20, 0x01
	b[4], b[5], b[6], b[7] = byte(i>>24), byte(i>>16), byte(i>>8), byte(i)
	return limits.Subject{Addr: netip.AddrFrom16(b)}
}

func run(cfg analytics.Config, callers, rounds int, every time.Duration) error {
	ctx := context.Background()
	admin := cfg
	admin.Database = "default"
	conn, err := analytics.Open(ctx, admin)
	if err != nil {
		return err
	}
	if err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+cfg.Database); err != nil {
		return err
	}
	conn.Close()
	if _, err := analytics.Migrate(ctx, cfg, slog.New(slog.DiscardHandler)); err != nil {
		return err
	}
	lcfg := limits.DefaultConfig()
	lcfg.Anonymous = limits.Policy{PerMinute: 1000, PerDay: 1000}
	store := usagelog.ClickHouse(analytics.NewLazy(cfg))
	edges := []*limits.Limiter{limits.New(lcfg, store), limits.New(lcfg, store)}
	for _, e := range edges {
		if err := e.Usage.Sync(ctx); err != nil {
			return err
		}
	}
	perRound := callers / rounds / len(edges)
	var syncs []time.Duration
	stale, calls := 0, 0
	next := 0
	start := time.Now()
	for r := range rounds {
		tick := time.Now()
		for _, e := range edges {
			for range perRound {
				// A new caller, and one seen before (on either edge).
				for _, s := range []limits.Subject{caller(next), caller(next / 2)} {
					calls++
					if e.Admit(s, 0, time.Now()).Outcome == ratelimit.UsageUnknown {
						stale++
					}
				}
				next++
			}
		}
		for _, e := range edges {
			t0 := time.Now()
			if err := e.Usage.Sync(ctx); err != nil {
				return fmt.Errorf("round %d: %w", r, err)
			}
			syncs = append(syncs, time.Since(t0))
		}
		time.Sleep(every - time.Since(tick))
	}
	elapsed := time.Since(start)
	slices.Sort(syncs)
	pct := func(p float64) time.Duration { return syncs[int(p*float64(len(syncs)-1))] }
	fmt.Printf("%d callers (%d calls) on %d edges in %d rounds over %v\n", next, calls, len(edges), rounds, elapsed.Round(time.Second))
	fmt.Printf("sync: median %v, p99 %v, max %v (%d syncs)\n", pct(0.5).Round(time.Millisecond/10), pct(0.99).Round(time.Millisecond/10),
		syncs[len(syncs)-1].Round(time.Millisecond/10), len(syncs))
	fmt.Printf("calls refused for stale totals (503): %d\n", stale)
	for i, e := range edges {
		fmt.Printf("edge %d holds the day's totals of %d callers\n", i+1, e.Usage.Subjects())
	}
	// What an edge pays when it starts: the day read whole.
	t0 := time.Now()
	read, err := store.Day(ctx, time.Now())
	if err != nil {
		return err
	}
	fmt.Printf("whole-day read at start: %d callers in %v\n", len(read.Totals), time.Since(t0).Round(time.Millisecond))
	read = usagelog.DayRead{}
	// Memory of a third edge's totals, after it starts.
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	third := limits.New(lcfg, store)
	if err := third.Usage.Sync(ctx); err != nil {
		return err
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	n := third.Usage.Subjects()
	fmt.Printf("a starting edge's totals: %d callers, live heap %.1f B a caller\n", n, float64(after.HeapAlloc-before.HeapAlloc)/float64(n))
	runtime.KeepAlive(third)
	return nil
}
