package cron

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron/memory"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// FullJob returns the job that reloads every listing with its history and
// rebuilds every figure. After a restart it first publishes the bare
// replica, so listings are served while history and figures load. A build
// that fails or is cut short publishes nothing: the last good state keeps
// serving.
func (v *Views) FullJob(schedule string) Job {
	return Job{Name: "views", Schedule: schedule, Run: v.full}
}

func (v *Views) full(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.source != nil {
		if err := v.follow(ctx); !errors.Is(err, ErrNoSource) {
			return err
		}
		v.log.Debug("full load from ClickHouse: no fleet state to follow")
	}
	v.heavy.Lock()
	defer v.heavy.Unlock()
	conn, err := v.db.Conn(ctx)
	if err != nil {
		return err
	}
	gen := v.nextGeneration()
	cur := v.pub.Load()
	o := analytics.ReplicaOptions{Generation: gen, PartSize: v.db.PartSize(), Progress: v.progress(gen)}
	if cur != nil && !v.reloadFits() {
		v.waits.Add(1)
		return nil
	}
	// What a load frees is collected when the job ends: a single edge
	// returns the pages, so that RSS settles at the state's size; a
	// fleet's leader keeps them for its next refresh (collectAfterLoad).
	// The text index of the new state (none to build when it shares the
	// text of the state it replaces) once the replaced state is
	// collected: built before, it would add to the reload's peak, where
	// two states are live. Searches scan until then.
	var published *replica.Replica
	defer func() {
		if published != nil {
			v.indexText(published)
		}
	}()
	defer func() { v.collectAfterLoad(published) }()
	if cur != nil {
		published, err = v.reload(ctx, conn, o, cur)
	} else {
		published, err = v.firstLoad(ctx, conn, o)
	}
	return err
}

// reload loads a new state beside cur, the state published, and
// publishes it: listings and history in one pass over the parts,
// sharing unchanged strings with cur's replica, so that the old state
// and one new replica are all that coexist.
func (v *Views) reload(ctx context.Context, conn driver.Conn, o analytics.ReplicaOptions, cur *served.State) (*replica.Replica, error) {
	gen := o.Generation
	o.History, o.Share = true, cur.Replica
	// Two states are live until the new one is published: the
	// collector runs closer to the live heap meanwhile, which costs
	// the job CPU and keeps the peak RSS near the two states.
	defer memory.LowerGC(memory.ReloadGCPercent)()
	full, err := analytics.LoadReplica(ctx, conn, o)
	if err != nil {
		return nil, fmt.Errorf("generation %d: %w", gen, err)
	}
	if full, err = v.withChanges(ctx, conn, full); err != nil {
		return nil, err
	}
	snapshots, err := analytics.CountSnapshots(ctx, conn)
	if err != nil {
		return nil, err
	}
	if v.onBuild != nil {
		v.onBuild()
	}
	// The dropped answers and what the load left are garbage: one
	// collection now, so that the build, which runs without one
	// (memory.BuildGC), starts from the two states alone.
	memory.Collect()
	if err := v.publish(full, nil, snapshots, "full", memory.BuildGC); err != nil {
		return nil, err
	}
	return full, nil
}

// firstLoad loads the first state after a restart and publishes it: the
// bare replica first, then its history and figures.
func (v *Views) firstLoad(ctx context.Context, conn driver.Conn, o analytics.ReplicaOptions) (*replica.Replica, error) {
	gen := o.Generation
	// After a restart, the bare replica first: listings are served while
	// history and figures load. Nothing else is in memory yet, and a
	// heap that only grows is marked whole by every collection: the
	// collector runs by a memory goal meanwhile (memory.GrowGC).
	restore := func() {}
	o.Counted = func(n int) { restore = memory.GrowGC(n) }
	r, err := analytics.LoadReplica(ctx, conn, o)
	restore()
	if err != nil {
		return nil, fmt.Errorf("replica generation %d: %w", gen, err)
	}
	v.pub.Publish(&served.State{Replica: r})
	v.log.Info("replica published", "generation", gen, "listings", r.Len(), "load_time", r.Info().LoadTime.Round(time.Millisecond))
	// Searches scan the text until its index is built: after the first
	// answer, so that it does not wait for the index.
	v.indexText(r)
	gen++
	defer memory.LowerGC(memory.ReloadGCPercent)() // the bare replica and the full one are both live
	start := time.Now()
	b := replica.BuilderFrom(r)
	info := r.Info()
	info.Generation, info.HasHistory = gen, true
	if err := analytics.AddHistory(ctx, conn, b, info, v.db.PartSize()); err != nil {
		return nil, fmt.Errorf("history of generation %d: %w", gen, err)
	}
	snapshots, err := analytics.CountSnapshots(ctx, conn)
	if err != nil {
		return nil, err
	}
	info.LoadTime += time.Since(start)
	info.LoadedAt = time.Now().UTC()
	full, err := v.withChanges(ctx, conn, b.Build(info))
	if err != nil {
		return nil, err
	}
	if err := v.publish(full, nil, snapshots, "full", memory.BuildGC); err != nil {
		return nil, err
	}
	return full, nil
}

// progress returns the part-by-part report of a full load: a debug log
// line, and the test hook after the first part.
func (v *Views) progress(gen uint64) func(done, total int) {
	return func(done, total int) {
		v.log.Debug("load progress", "generation", gen, "parts", done, "of", total)
		if done == 1 && v.afterPart != nil {
			v.afterPart()
		}
	}
}

// RefreshJob returns the job that reads again only the listings whose
// metadata or newest reading changed since the last load, merges them into
// the replica, and rebuilds the figures. It waits for the first full build.
func (v *Views) RefreshJob(schedule string) Job {
	return Job{Name: "refresh", Schedule: schedule, Run: v.refresh}
}

func (v *Views) refresh(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	cur := v.pub.Load()
	if cur == nil || cur.Figures == nil {
		return nil // the full build has not finished yet; it will cover this
	}
	if v.source != nil {
		if err := v.follow(ctx); !errors.Is(err, ErrNoSource) {
			return err
		}
	}
	conn, err := v.db.Conn(ctx)
	if err != nil {
		return err
	}
	r, changed, err := analytics.RefreshReplica(ctx, conn, cur.Replica, v.nextGeneration())
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	if changed == 0 {
		return nil
	}
	log, err := analytics.RefreshChanges(ctx, conn, cur.Replica, r, cur.Replica.Changes(), v.changesFrom(r.Info()))
	if err != nil {
		return err
	}
	r = r.WithChanges(log)
	snapshots, err := analytics.CountSnapshots(ctx, conn)
	if err != nil {
		return err
	}
	// Built from the figures published: the merge says which listings
	// it replaced (replica.Merge), so the listing queries' sort orders
	// are merged as a follower's after a delta, not sorted again (at 5M
	// listings, 4.7–5.2 s against 5.8–6.6 s whole: BenchmarkBuildAfterDelta),
	// on cores the leader's followers, building beside it, share.
	if err := v.publish(r, cur.Figures, snapshots, "refresh", nil, "changed", changed); err != nil {
		return err
	}
	if v.source != nil {
		// A fleet's leader keeps the pages for its next refresh, which
		// its followers wait for (collectKeeping); a single edge
		// collects the replaced state as it allocates.
		v.collectKeeping(r.Len(), false)
	}
	v.indexText(r) // none to build when r shares the text of the replica it came from
	return nil
}
