package cron

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/internal/memory"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
)

// EditionsJob returns the job that builds the weekly edition of every
// complete ISO week in the data that has none yet, newest first, and
// publishes after each one, so the latest edition is served first. A week
// is complete when the data covers it from Monday 00:00 to Sunday 24:00 UTC.
// At most max editions are kept built. Each edition is a deterministic
// function of the data up to the end of its week. Each week state is read
// holding heavy (when not nil; see builder.Builder.Heavy), so that it never adds to
// the memory of a full reload. The job first waits on ready (when not nil;
// see builder.Builder.WaitFigures): after a restart, the listings and figures come
// first. When it built an edition, it collects the week states it read and
// returns their pages to the system, so RSS settles at the published
// state's size.
//
// Every edition built is kept in ClickHouse (analytics.StoreEdition), and
// an edition kept there is loaded, not built: a fleet builds each once,
// and a restart builds none again. leading, when not nil, says whether
// this edge leads its fleet (package leader): only then does it build;
// the others wait for the leader's, and the job fails (and is retried)
// while an edition they lack is not kept yet.
func EditionsJob(db *analytics.Lazy, pub *views.Published[editions.Set], schedule string, max int, heavy sync.Locker,
	ready func(context.Context) error, leading func() bool, log *slog.Logger) Job {
	return Job{Name: "editions", Schedule: schedule, Run: func(ctx context.Context) error {
		if ready != nil {
			if err := ready(ctx); err != nil {
				return err
			}
		}
		conn, first, last, err := dataSpan(ctx, db)
		if err != nil || conn == nil {
			return err // nil: no data yet
		}
		before := pub.Load()
		defer func() {
			if pub.Load() != before {
				memory.CollectReplaced()
			}
		}()
		kept, err := analytics.LoadEditions(ctx, conn, editions.FormatVersion)
		if err != nil {
			return err
		}
		keep := func(ctx context.Context, e *editions.Edition) error {
			body, err := json.Marshal(e)
			if err != nil {
				return fmt.Errorf("keep edition %s: %w", e.Week, err)
			}
			return analytics.StoreEdition(ctx, conn, e.Week, editions.FormatVersion, body)
		}
		src := EditionSource{Kept: kept, Keep: keep, MayBuild: leading == nil || leading()}
		return BuildEditions(ctx, pub, max, first, last, func(ctx context.Context, at time.Time) (*editions.State, error) {
			if heavy != nil {
				heavy.Lock()
				defer heavy.Unlock()
			}
			return analytics.LoadWeekState(ctx, conn, at, db.PartSize())
		}, src, log)
	}}
}

// EditionSource is where BuildEditions finds editions already built, and
// whether it may build the others.
type EditionSource struct {
	Kept     map[string][]byte                                    // kept editions' JSON by week; nil: none
	Keep     func(ctx context.Context, e *editions.Edition) error // keeps an edition built; nil: not kept
	MayBuild bool                                                 // false: wait for the editions kept by another edge
}

// BuildEditions publishes the edition of every complete ISO week between
// the readings first and last that pub has none of yet, newest first,
// after each one; at most max are kept. An edition kept in src is loaded;
// another is built from the states load gives (the state of every listing
// at an instant) and kept, when src.MayBuild; else it is waited for: the
// call then fails, naming how many wait. An edition pub has but src has
// not kept is kept (when src.MayBuild): one whose keeping failed before.
func BuildEditions(ctx context.Context, pub *views.Published[editions.Set], max int, first, last time.Time,
	load func(context.Context, time.Time) (*editions.State, error), src EditionSource, log *slog.Logger) error {
	// The week holding the newest reading is not complete yet (a reading at
	// Monday 00:00 sits in the new week, so the one before is complete).
	newest := editions.WeekOf(views.DayOf(last)).Prev()
	oldest := OldestEdition(first, newest)
	var (
		built, loaded, waiting int
		cur                    *editions.State // state at the end of w
		err                    error
	)
	for w, n := newest, 0; !w.Before(oldest) && n < max; w, n = w.Prev(), n+1 {
		if pub.Load().Has(w) {
			cur = nil
			// An edition this edge built but could not keep is kept now:
			// the fleet's other edges wait for it.
			if _, ok := src.Kept[w.String()]; !ok && src.MayBuild && src.Keep != nil {
				if err := src.Keep(ctx, pub.Load().Get(w)); err != nil {
					return fmt.Errorf("keep edition %s: %w", w, err)
				}
			}
			continue
		}
		if body, ok := src.Kept[w.String()]; ok {
			var e editions.Edition
			if err := json.Unmarshal(body, &e); err != nil {
				return fmt.Errorf("kept edition %s: %w", w, err)
			}
			next, err := editions.NewSet(pub.Load(), &e)
			if err != nil {
				return err
			}
			pub.Publish(next)
			loaded, cur = loaded+1, nil
			continue
		}
		if !src.MayBuild {
			waiting, cur = waiting+1, nil
			continue
		}
		start := time.Now()
		if cur == nil || !cur.At.Equal(w.End()) {
			if cur, err = load(ctx, w.End()); err != nil {
				return fmt.Errorf("edition %s: %w", w, err)
			}
		}
		prev, err := load(ctx, w.Start().Time())
		if err != nil {
			return fmt.Errorf("edition %s: %w", w, err)
		}
		e := editions.Build(w, cur, prev)
		next, err := editions.NewSet(pub.Load(), e)
		if err != nil {
			return err
		}
		pub.Publish(next)
		built++
		if src.Keep != nil {
			if err := src.Keep(ctx, e); err != nil {
				log.Warn("edition built but not kept yet: the next run keeps it", "week", w.String(), "err", err)
			}
		}
		log.Debug("edition built", "week", w.String(), "took", time.Since(start).Round(time.Millisecond))
		cur = prev // the previous week ends where this one starts
	}
	if built+loaded > 0 {
		log.Info("editions published", "built", built, "loaded", loaded, "total", pub.Load().Len(), "latest", pub.Load().Latest().Week)
	}
	if waiting > 0 {
		return fmt.Errorf("%d editions wait for the edge that leads the fleet to build them", waiting)
	}
	return nil
}

// OldestEdition returns the first week that gets an edition when the
// readings begin at first and the newest complete week is newest: the
// first week whose start is a whole lookback (analytics.WeekLookback)
// after first, so that the state it compares with holds every listing
// read in the month before, as every later week's does. A week starting
// sooner compares with a state that misses the listings not read since
// the data began: it would count thousands of them as returning and
// could see no departure. While the readings cover less than that (a new
// fleet's first month, a short test dataset), the editions start at the
// first complete week, and the first of them compares with such a part.
func OldestEdition(first time.Time, newest editions.Week) editions.Week {
	oldest := firstWeekFrom(first) // the first week is partial
	if full := firstWeekFrom(first.Add(analytics.WeekLookback)); !newest.Before(full) {
		oldest = full
	}
	return oldest
}

// firstWeekFrom returns the first week that starts at or after t.
func firstWeekFrom(t time.Time) editions.Week {
	w := editions.WeekOf(views.DayOf(t))
	if w.Start().Time().Before(t) {
		w = w.Next()
	}
	return w
}

// dataSpan connects and returns the times of the first and the last
// reading; conn is nil (and err too) while there is no data yet.
func dataSpan(ctx context.Context, db *analytics.Lazy) (conn driver.Conn, first, last time.Time, err error) {
	if conn, err = db.Conn(ctx); err != nil {
		return nil, first, last, err
	}
	if first, last, err = analytics.DataSpan(ctx, conn); err != nil {
		return nil, first, last, err
	}
	if first.IsZero() || first.Unix() <= 0 {
		return nil, first, last, nil
	}
	return conn, first, last, nil
}
