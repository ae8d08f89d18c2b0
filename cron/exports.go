package cron

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/views"
)

// ExportsConfig configures the daily bulk exports.
type ExportsConfig struct {
	Dir   string        // where the files are kept: a directory of this edge, or one shared by the fleet
	Keep  int           // days of exports kept
	Grace time.Duration // how long after a day's end its readings are awaited before it is exported
	// PerRun bounds the days one run builds (newest first), so that a
	// first run with Keep days to catch up does not hold the job for
	// long; the next runs build the rest.
	PerRun int
}

// Exports builds the daily exports and publishes the list of days
// exported, for the API to serve.
type Exports struct {
	cfg    ExportsConfig
	db     *analytics.Lazy
	log    *slog.Logger
	days   views.Published[[]exports.Manifest]
	source ExportsSource
	ready  func(ctx context.Context) error // waited on before a build (WaitFor)
}

// WaitFor makes the job wait on ready (builder.Builder.WaitFigures) before it
// builds from ClickHouse: after a restart the full load has ClickHouse
// and the memory first, and the exports' reads do not run beside it (at
// 5M listings they failed with i/o timeouts there). Set it before the job
// starts.
func (e *Exports) WaitFor(ready func(ctx context.Context) error) { e.ready = ready }

// ExportsSource is where an edge of a fleet copies its exports from
// instead of building them (package fleet/exchange).
type ExportsSource interface {
	// Days returns the days the source has, newest first; an error
	// wrapping follow.ErrNoSource says the edge should build its own.
	Days(ctx context.Context) ([]exports.Manifest, error)
	// Open returns the bytes of file name of day.
	Open(ctx context.Context, day, name string) (io.ReadCloser, error)
}

// FollowFrom makes the job copy the days src has instead of building
// them, and build them itself only when src says follow.ErrNoSource. Set it
// before the job starts.
func (e *Exports) FollowFrom(src ExportsSource) { e.source = src }

// NewExports returns the exports of cfg, built from db.
func NewExports(cfg ExportsConfig, db *analytics.Lazy, log *slog.Logger) *Exports {
	return &Exports{cfg: cfg, db: db, log: log}
}

// Dir returns the directory of the exports.
func (e *Exports) Dir() string { return e.cfg.Dir }

// Days returns the days exported, newest first (nil before the first run
// has listed them).
func (e *Exports) Days() []exports.Manifest {
	if d := e.days.Load(); d != nil {
		return *d
	}
	return nil
}

// Job returns the job that builds the days closed since the last run and
// not exported yet, prunes the days past Keep, and lists what is there
// (days another edge sharing the directory built included).
func (e *Exports) Job(schedule string) Job {
	return Job{Name: "exports", Schedule: schedule, Run: e.run}
}

// Refresh lists the days exported in the directory, without building.
func (e *Exports) Refresh() error {
	days, err := exports.Days(e.cfg.Dir)
	if err != nil {
		return err
	}
	e.days.Publish(&days)
	return nil
}

func (e *Exports) run(ctx context.Context) error {
	if e.source != nil {
		err := e.copy(ctx)
		if !errors.Is(err, follow.ErrNoSource) {
			return err
		}
	}
	if e.ready != nil {
		if err := e.ready(ctx); err != nil {
			return err
		}
	}
	conn, err := e.db.Conn(ctx)
	if err != nil {
		return err
	}
	w, err := analytics.ReadWatermarks(ctx, conn)
	if err != nil {
		return err
	}
	if w.Readings.IsZero() || w.Readings.Unix() <= 0 {
		return e.Refresh() // no data yet
	}
	first, err := analytics.FirstReadingDay(ctx, conn)
	if err != nil {
		return err
	}
	// The newest closed day: its end is Grace before the newest reading.
	last := views.DayOf(w.Readings.Add(-e.cfg.Grace)) - 1
	oldest := max(last-views.Day(e.cfg.Keep)+1, first)
	built := 0
	for d := last; d >= oldest && built < e.cfg.PerRun; d-- {
		m, fresh, err := exports.Build(ctx, conn, e.cfg.Dir, d)
		if err != nil {
			return fmt.Errorf("exports: %w", err)
		}
		if fresh {
			built++
			e.log.Info("export built", "day", m.Day, "seconds", m.Seconds, "files", len(m.Files))
		}
	}
	if err := exports.Prune(e.cfg.Dir, oldest); err != nil {
		return err
	}
	return e.Refresh()
}

// copy copies the source's days this edge lacks (the Keep newest), and
// removes the days older than the oldest of those.
func (e *Exports) copy(ctx context.Context) error {
	days, err := e.source.Days(ctx)
	if err != nil {
		return err
	}
	days = days[:min(len(days), e.cfg.Keep)]
	copied := 0
	for _, m := range days {
		ok, err := exports.Copy(ctx, e.cfg.Dir, m, func(ctx context.Context, name string) (io.ReadCloser, error) {
			return e.source.Open(ctx, m.Day, name)
		})
		if err != nil {
			return fmt.Errorf("exports: %w", err)
		}
		if ok {
			copied++
		}
	}
	if len(days) > 0 {
		oldest, err := time.Parse(time.DateOnly, days[len(days)-1].Day)
		if err != nil {
			return fmt.Errorf("exports: %w", err)
		}
		if err := exports.Prune(e.cfg.Dir, views.DayOf(oldest)); err != nil {
			return err
		}
	}
	if copied > 0 {
		e.log.Info("exports copied from the fleet's leader", "days", copied)
	}
	return e.Refresh()
}
