package cron

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

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
	// AfterRanks makes a latest set wait until every day of its history
	// is ranked (the ranks job runs in the fleet): a set is built once a
	// day, and one built while the ranks job catches up would hold no
	// ranks for most of its days until the next.
	AfterRanks bool
}

// Exports builds the daily exports and publishes the list of days
// exported, for the API to serve.
type Exports struct {
	cfg    ExportsConfig
	db     *analytics.Lazy
	log    *slog.Logger
	days   views.Published[[]exports.Manifest]
	latest views.Published[[]exports.Manifest]
	// checked holds the stamp of every listed file when it was checked
	// against its manifest (exports.Check): what the API serves.
	checked views.Published[map[string]exports.Stamp]
	source  ExportsSource
	ready   func(ctx context.Context) error // waited on before a build (WaitFor)
	waiting atomic.Bool                     // the newest latest set waits for the ranks
}

// WaitingForRanks says whether the last run left the newest latest set
// to build once the ranks are done: the ranks job runs the exports again
// when it ends (cmd/edge), so the set comes minutes after the ranks, not
// at the exports job's next hour.
func (e *Exports) WaitingForRanks() bool { return e.waiting.Load() }

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
	// Latest returns the latest sets the source has, newest first
	// (none from a release before the lake).
	Latest(ctx context.Context) ([]exports.Manifest, error)
	// Open returns the bytes of file name of day, or of a latest set
	// when day is "latest/<day>".
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

// Latest returns the latest sets (exports.BuildLatest), newest first:
// the first is what the stable latest addresses serve.
func (e *Exports) Latest() []exports.Manifest {
	if d := e.latest.Load(); d != nil {
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

// Refresh lists the days exported in the directory and the latest sets,
// without building, each file checked against its manifest: a file
// changed since its last check is read whole again (its size and
// SHA-256), and a day or set with a file that fails is moved aside
// (exports.Quarantine), not listed, and built or copied again by the
// next run.
func (e *Exports) Refresh() error {
	days, err := exports.Days(e.cfg.Dir)
	if err != nil {
		return err
	}
	latest, err := exports.Latest(e.cfg.Dir)
	if err != nil {
		return err
	}
	before := map[string]exports.Stamp{}
	if c := e.checked.Load(); c != nil {
		before = *c
	}
	checked := map[string]exports.Stamp{}
	days = e.intact(days, false, before, checked)
	latest = e.intact(latest, true, before, checked)
	e.checked.Publish(&checked)
	e.days.Publish(&days)
	e.latest.Publish(&latest)
	return nil
}

// intact returns the manifests of ms whose files all pass their check,
// adding their stamps to checked.
func (e *Exports) intact(ms []exports.Manifest, latest bool, before, checked map[string]exports.Stamp) []exports.Manifest {
	out := ms[:0]
	for _, m := range ms {
		files := exports.Files(e.cfg.Dir, m, latest)
		var bad error
		for path, f := range files {
			if st, err := exports.StampOf(path); err == nil && before[path] == st && st.Size == f.Size {
				checked[path] = st
				continue
			}
			st, err := exports.Check(path, f)
			if err != nil {
				bad = err
				break
			}
			checked[path] = st
		}
		if bad == nil {
			out = append(out, m)
			continue
		}
		dir := filepath.Join(e.cfg.Dir, m.Day)
		if latest {
			dir = filepath.Join(e.cfg.Dir, exports.LatestDir, m.Day)
		}
		e.log.Error("an export file failed its check: its directory is moved aside, to be built or copied again", "dir", dir, "err", bad)
		if err := exports.Quarantine(dir); err != nil {
			e.log.Error("exports", "err", err)
		}
	}
	return out
}

// Intact reports whether the file at path, listed as f, is as it was
// when it passed its check (Refresh): the same size and time of writing.
func (e *Exports) Intact(path string, f exports.File) bool {
	c := e.checked.Load()
	if c == nil {
		return false
	}
	want, ok := (*c)[path]
	st, err := exports.StampOf(path)
	return ok && err == nil && st == want && st.Size == f.Size
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
			e.log.Info("export built", "day", m.Day, "seconds", m.Seconds, "files", len(m.Files)+len(m.Parquet))
		}
	}
	if err := exports.Prune(e.cfg.Dir, oldest); err != nil {
		return err
	}
	// The latest set of the newest day exported (by this edge or another
	// sharing the directory).
	if days, err := exports.Days(e.cfg.Dir); err == nil && len(days) > 0 {
		newest, _ := time.Parse(time.DateOnly, days[0].Day)
		if err := e.buildLatest(ctx, conn, views.DayOf(newest)); err != nil {
			return err
		}
	}
	if err := exports.PruneLatest(e.cfg.Dir); err != nil {
		return err
	}
	return e.Refresh()
}

// buildLatest builds the latest set of day d unless it is there, or, with
// AfterRanks, some day of its history is still to be ranked.
func (e *Exports) buildLatest(ctx context.Context, conn driver.Conn, d views.Day) error {
	if e.cfg.AfterRanks {
		if _, err := os.Stat(filepath.Join(e.cfg.Dir, exports.LatestDir, d.String())); err != nil {
			todo, err := analytics.DaysToRank(ctx, conn, (d - views.Day(analytics.HistoryDays) + 1).Time())
			if err != nil {
				return err
			}
			if n := countUpTo(todo, d); n > 0 {
				e.log.Info("the latest exports wait for the ranks", "day", d.String(), "days to rank", n)
				e.waiting.Store(true)
				return nil
			}
		}
	}
	e.waiting.Store(false)
	m, fresh, err := exports.BuildLatest(ctx, conn, e.cfg.Dir, d)
	if err != nil {
		return fmt.Errorf("exports: %w", err)
	}
	if fresh {
		e.log.Info("latest exports built", "day", m.Day, "seconds", m.Seconds, "files", len(m.Parquet))
	}
	return nil
}

// countUpTo returns how many of days are d or before.
func countUpTo(days []analytics.RankDay, d views.Day) int {
	n := 0
	for _, r := range days {
		if views.DayOf(r.Day) <= d {
			n++
		}
	}
	return n
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
	var failed []error // a day that does not copy (a file damaged at the source) keeps no other from copying
	for _, m := range days {
		ok, err := exports.Copy(ctx, e.cfg.Dir, m, func(ctx context.Context, name string) (io.ReadCloser, error) {
			return e.source.Open(ctx, m.Day, name)
		})
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			failed = append(failed, fmt.Errorf("exports: %w", err))
			continue
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
	if err := e.copyLatest(ctx); err != nil {
		failed = append(failed, err)
	}
	return errors.Join(append(failed, e.Refresh())...)
}

// copyLatest copies the source's newest latest set, when this edge lacks
// it, and prunes the older ones.
func (e *Exports) copyLatest(ctx context.Context) error {
	sets, err := e.source.Latest(ctx)
	if err != nil || len(sets) == 0 {
		return err
	}
	m := sets[0]
	ok, err := exports.CopyLatest(ctx, e.cfg.Dir, m, func(ctx context.Context, name string) (io.ReadCloser, error) {
		return e.source.Open(ctx, exports.LatestDir+"/"+m.Day, name)
	})
	if err != nil {
		return fmt.Errorf("exports: %w", err)
	}
	if ok {
		e.log.Info("latest exports copied from the fleet's leader", "day", m.Day)
	}
	return exports.PruneLatest(e.cfg.Dir)
}
