package cron

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/exports"
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
	cfg  ExportsConfig
	db   *analytics.Lazy
	log  *slog.Logger
	days views.Published[[]exports.Manifest]
}

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
