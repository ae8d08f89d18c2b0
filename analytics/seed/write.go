package seed

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
)

// ErrNotEmpty is returned by Write when the database already holds data and
// neither Append nor Reset was asked for.
var ErrNotEmpty = errors.New("the database already holds listings: pass --append to add to them or --reset to replace them")

// WriteOptions say how Write treats existing data and reports progress.
type WriteOptions struct {
	Append   bool           // write even if the tables hold data
	Reset    bool           // empty the tables first
	Workers  int            // generating and writing goroutines; 0 means GOMAXPROCS+1
	Chunk    int            // listings per batch; 0 picks one from the history length
	Progress func(Progress) // called every Every and once at the end, never two calls at once; may be nil
	Every    time.Duration  // how often Progress is called; 0 means 250ms
}

// Progress reports how far Write has come.
type Progress struct {
	Listings, TotalListings int
	Rows                    int64 // rows written to all tables
	Elapsed                 time.Duration
	Done                    bool
}

// RowsPerSecond returns the write throughput so far.
func (p Progress) RowsPerSecond() float64 {
	if p.Elapsed <= 0 {
		return 0
	}
	return float64(p.Rows) / p.Elapsed.Seconds()
}

// Write generates the dataset of o and writes it into the upstream tables.
// It refuses to write into tables that hold data unless w.Append or w.Reset
// is set. It returns the final progress.
func Write(ctx context.Context, conn driver.Conn, o Options, w WriteOptions) (Progress, error) {
	if err := o.Validate(); err != nil {
		return Progress{}, err
	}
	if err := makeRoom(ctx, conn, w); err != nil {
		return Progress{}, err
	}
	w = w.withDefaults(o)
	start := time.Now()
	var listingsDone, rows atomic.Int64
	report := func(done bool) {
		if w.Progress != nil {
			w.Progress(Progress{Listings: int(listingsDone.Load()), TotalListings: o.Listings,
				Rows: rows.Load(), Elapsed: time.Since(start), Done: done})
		}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range w.Workers {
		wg.Go(func() {
			g := NewGenerator(o)
			var batch Rows
			for ctx.Err() == nil {
				from := int(next.Add(int64(w.Chunk))) - w.Chunk
				if from >= o.Listings {
					return
				}
				to := min(from+w.Chunk, o.Listings)
				batch.reset()
				for i := from; i < to; i++ {
					g.Append(&batch, i)
				}
				if err := writeRows(ctx, conn, &batch); err != nil {
					cancel(err)
					return
				}
				listingsDone.Add(int64(to - from))
				rows.Add(int64(batch.Len()))
			}
		})
	}
	stopReports := reportEvery(w.Every, report)
	wg.Wait()
	stopReports() // the reporter's last call returns before the final one: calls never overlap
	if err := context.Cause(ctx); err != nil {
		return Progress{}, fmt.Errorf("seed: %w", err)
	}
	report(true)
	return Progress{Listings: int(listingsDone.Load()), TotalListings: o.Listings, Rows: rows.Load(),
		Elapsed: time.Since(start), Done: true}, nil
}

// makeRoom empties the database when w says Reset, and otherwise, unless
// w says Append, refuses one that holds data (ErrNotEmpty).
func makeRoom(ctx context.Context, conn driver.Conn, w WriteOptions) error {
	if w.Reset {
		return analytics.Reset(ctx, conn)
	}
	if w.Append {
		return nil
	}
	empty, err := analytics.IsEmpty(ctx, conn)
	if err != nil {
		return err
	}
	if !empty {
		return ErrNotEmpty
	}
	return nil
}

// withDefaults returns w with its zero sizes set for o: a worker a core
// and one more, chunks of about 600,000 readings, a report every 250 ms.
func (w WriteOptions) withDefaults(o Options) WriteOptions {
	if w.Workers <= 0 {
		w.Workers = runtime.GOMAXPROCS(0) + 1
	}
	if w.Chunk <= 0 {
		w.Chunk = max(200, min(5000, 600_000/max(o.Days, 1)))
	}
	if w.Every <= 0 {
		w.Every = 250 * time.Millisecond
	}
	return w
}

// reportEvery calls report(false) every interval until the function it
// returns is called, which returns once the last call has.
func reportEvery(every time.Duration, report func(done bool)) (stop func()) {
	quit, stopped := make(chan struct{}), make(chan struct{})
	ticker := time.NewTicker(every)
	go func() {
		defer close(stopped)
		defer ticker.Stop()
		for {
			select {
			case <-ticker.C:
				report(false)
			case <-quit:
				return
			}
		}
	}()
	return func() {
		close(quit)
		<-stopped
	}
}

func writeRows(ctx context.Context, conn driver.Conn, r *Rows) error {
	if err := analytics.WriteListings(ctx, conn, r.Listings); err != nil {
		return err
	}
	if err := analytics.WriteSnapshots(ctx, conn, r.Snapshots); err != nil {
		return err
	}
	return analytics.WriteReviews(ctx, conn, r.Reviews)
}
