// Package edgetest starts an edge server on a loopback port for tests:
// over a seeded ClickHouse database, or over the same rows in memory
// (package memload), so that the HTTP tests of the APIs, the answers and
// the tool server run without a database server.
package edgetest

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/memload"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/builder"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/served"
)

// Dataset is what an edge under test answers from: a seeded ClickHouse
// database, or rows in memory.
type Dataset struct {
	CH  *analytics.Config // the database; nil for a dataset in memory
	Mem *memload.Data     // the rows, when CH is nil
}

// Seed returns the options of the test dataset of n listings: 15 days of
// history ending 2026-03-01, one stored review per listing.
func Seed(n int) seed.Options {
	return seed.Options{Seed: 5, Listings: n, Days: 15, ReviewsPerListing: 1,
		End: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)}
}

// DemoEnd is the end of DemoSeed's data: the data of a `make run` on
// 2026-12-01, whose days the OpenAPI description's dated examples name.
var DemoEnd = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// DemoSeed returns the first n listings of `make run`'s demo dataset
// (seed.DefaultOptions: seed 1, the stores' real shares, five stored
// reviews a listing) with 40 days of history ending DemoEnd. A listing is
// generated from its own random stream, so its store and id are the same
// in every demo dataset of n listings or more: the OpenAPI description's
// examples name listings of it, and hold on the demo data a new user has.
func DemoSeed(n int) seed.Options {
	o := seed.DefaultOptions()
	o.Listings, o.Days, o.End = n, 40, DemoEnd
	return o
}

// Memory returns the dataset of o, in memory.
func Memory(o seed.Options) Dataset {
	rows := seed.Generate(o)
	return Dataset{Mem: memload.New(rows.Listings, rows.Snapshots)}
}

// Add adds rows to the dataset, as the crawler writes them: a job run
// afterwards reads them.
func (d Dataset) Add(t testing.TB, listings []analytics.ListingRow, snapshots []analytics.SnapshotRow) {
	t.Helper()
	if d.CH == nil {
		d.Mem.Add(listings, snapshots)
		return
	}
	ctx := context.Background()
	conn, err := analytics.Open(ctx, *d.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if err := analytics.WriteListings(ctx, conn, listings); err != nil {
		t.Fatal(err)
	}
	if err := analytics.WriteSnapshots(ctx, conn, snapshots); err != nil {
		t.Fatal(err)
	}
}

// Harness is a running edge server with its jobs, on a loopback port.
type Harness struct {
	Base     string // http://127.0.0.1:port
	State    *views.Published[served.State]
	Editions *views.Published[editions.Set]
	Jobs     *cron.Runner
	Server   *edge.Server
	// Stop stops the server gracefully and returns what Serve returned;
	// the test's cleanup calls it too.
	Stop func() error
	// Exports are the daily exports of an edge over ClickHouse, built in
	// a temporary directory by the "exports" job (nil in memory).
	Exports *cron.Exports
}

// Config returns the settings tests start from: the defaults with fair
// use off and limits too high to reach (tests of limits set their own),
// a large search pool, and keys and usage synced every 100 ms.
func Config() edge.Config {
	cfg := edge.DefaultConfig()
	cfg.FairUseRate = 0
	cfg.Limits.Anonymous = limits.Policy{PerMinute: 1 << 30, PerDay: 1 << 40}
	cfg.Limits.Keyed = limits.Policy{PerMinute: 1 << 30, PerDay: 1 << 40}
	cfg.Limits.SearchSlots, cfg.Limits.SearchRate = 64, 0
	cfg.KeysEvery, cfg.UsageEvery = 100*time.Millisecond, 100*time.Millisecond
	// Precompression at the best level after each publish costs seconds
	// of a core under the race detector, in every test's edge: the tests
	// of compression turn it on.
	cfg.NoPrecompress = true
	// Tests ask many misses at once, slowly under the race detector: the
	// gate's turns are many and waited for long (the gate's tests set
	// their own).
	cfg.Misses = missgate.Config{Share: 32, Wait: 30 * time.Second, Queue: 64}
	// The clients of tests keep idle connections: a stop need not wait
	// the production drain for them.
	cfg.DrainTimeout = 100 * time.Millisecond
	return cfg
}

// Start starts an edge over d with the settings of Config changed by
// opts, logging to log (nil: nowhere). Its jobs are added but not started:
// a test runs them with h.Jobs.RunNow("views") (and "editions"). With a
// dataset in memory, ClickHouse-backed reads (history, reviews, review
// search, accounts) answer 503, keys cannot be checked, and the day's
// usage is this edge's alone.
func Start(t testing.TB, d Dataset, log *slog.Logger, opts ...func(*edge.Config)) *Harness {
	t.Helper()
	return StartWith(t, d, log, nil, opts...)
}

// StartWith is Start with the edge's sources changed by sources (when
// not nil) before the server is made: a test of a fleet gives an edge
// the usage store and key gate of a following edge (package relay).
func StartWith(t testing.TB, d Dataset, log *slog.Logger, sources func(*edge.Sources), opts ...func(*edge.Config)) *Harness {
	t.Helper()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Harness{State: &views.Published[served.State]{}, Editions: &views.Published[editions.Set]{}}
	h.Jobs = cron.New(ctx, log, cron.Backoff{Initial: 10 * time.Millisecond, Max: 50 * time.Millisecond})
	src := edge.Sources{State: h.State, Editions: h.Editions, Jobs: h.Jobs.Status}
	var jobs []cron.Job
	var jobsDB *analytics.Lazy
	if d.CH != nil {
		jobs, jobsDB = clickHouseJobs(t, *d.CH, h, &src, log)
	} else {
		// Nothing listens on port 1 of loopback: every read fails at once.
		chCfg := analytics.DefaultConfig()
		chCfg.Addr, chCfg.DialTimeout = "127.0.0.1:1", 200*time.Millisecond
		src.DB = analytics.NewLazy(chCfg)
		src.Usage = usagelog.Memory()
		jobs = memoryJobs(d.Mem, h, log)
	}
	for _, j := range jobs {
		if err := h.Jobs.Add(j); err != nil {
			t.Fatal(err)
		}
	}
	cfg := Config()
	for _, o := range opts {
		o(&cfg)
	}
	if sources != nil {
		sources(&src)
	}
	s, err := edge.New(cfg, src, log)
	if err != nil {
		t.Fatal(err)
	}
	h.Server = s
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h.Base = "http://" + ln.Addr().String()
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	h.Stop = stopper(t, cancel, done, h.Jobs, src.DB, src.SyncDB, jobsDB)
	t.Cleanup(func() { h.Stop() })
	// Serve listens once it has tried to load the keys and the day's usage:
	// wait for that, so that a test's first call finds the limits ready.
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		resp, err := http.Get(h.Base + "/healthz")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edge did not start listening: %v", err)
		}
	}
	return h
}

// clickHouseJobs are the jobs of an edge over ClickHouse at cfg, on
// three pools as cmd/edge has them (per-request reads and the usage sync
// and keys' refresh in src, the jobs' returned), wired as cmd/edge wires
// them.
func clickHouseJobs(t testing.TB, cfg analytics.Config, h *Harness, src *edge.Sources, log *slog.Logger) ([]cron.Job, *analytics.Lazy) {
	jobsDB := analytics.NewLazy(cfg)
	src.DB, src.SyncDB = analytics.NewLazy(cfg), analytics.NewLazy(cfg)
	vb := builder.New(jobsDB, h.State, log)
	src.Building = vb.Building
	jobs := []cron.Job{vb.FullJob("@every 1h"), vb.RefreshJob("@every 1h"),
		cron.EditionsJob(jobsDB, h.Editions, "@every 1h", 260, vb.Heavy(), nil, nil, log), cron.RanksJob(jobsDB, "@every 1h", log)}
	h.Exports = cron.NewExports(cron.ExportsConfig{Dir: t.TempDir(), Keep: 30, PerRun: 30}, jobsDB, log)
	src.Exports = h.Exports
	return append(jobs, h.Exports.Job("@every 1h")), jobsDB
}

// stopper returns the harness's Stop: it ends the server (cancel, then
// its Serve's error from done), logging every goroutine when the
// graceful stop failed, then the jobs and the pools. Calls after the
// first return nil.
func stopper(t testing.TB, cancel func(), done <-chan error, jobs *cron.Runner, dbs ...*analytics.Lazy) func() error {
	var stopped bool
	return func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		err := <-done
		if err != nil {
			// What held the graceful stop: every goroutine, for the log.
			var stacks strings.Builder
			pprof.Lookup("goroutine").WriteTo(&stacks, 1)
			t.Logf("the edge's stop failed (%v); goroutines:\n%s", err, stacks.String())
		}
		jobs.Stop()
		for _, db := range dbs {
			if db != nil {
				db.Close()
			}
		}
		return err
	}
}

// memoryJobs are the jobs of an edge over rows in memory, named as the
// real ones: "views" publishes the replica with its figures as a new
// generation, "editions" builds every weekly edition; "refresh" and
// "ranks" have nothing to do.
func memoryJobs(d *memload.Data, h *Harness, log *slog.Logger) []cron.Job {
	nothing := func(context.Context) error { return nil }
	return []cron.Job{
		{Name: "views", Schedule: "@every 1h", Run: func(context.Context) error {
			// As builder.Builder: after a restart the bare replica first, then
			// the replica with its figures as the next generation.
			gen := uint64(1)
			if cur := h.State.Load(); cur != nil {
				gen = cur.Replica.Info().Generation + 1
			} else {
				h.State.Publish(&served.State{Replica: d.Replica(gen, time.Now())})
				gen++
			}
			r := d.Replica(gen, time.Now())
			r.IndexText() // as the views job does: searches read the trigram index
			h.State.Publish(&served.State{Replica: r, Figures: figures.Build(r, d.Snapshots())})
			return nil
		}},
		{Name: "refresh", Schedule: "@every 1h", Run: nothing},
		{Name: "editions", Schedule: "@every 1h", Run: func(ctx context.Context) error {
			first, last := d.Span()
			return cron.BuildEditions(ctx, h.Editions, 260, first, last, func(_ context.Context, at time.Time) (*editions.State, error) {
				return d.WeekState(at), nil
			}, cron.EditionSource{MayBuild: true}, log)
		}},
		{Name: "ranks", Schedule: "@every 1h", Run: nothing},
	}
}
