package builder

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/internal/memory"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// FullJob returns the job that reloads every listing with its history and
// rebuilds every figure. After a restart it first publishes the bare
// replica, so listings are served while history and figures load. A build
// that fails or is cut short publishes nothing: the last good state keeps
// serving.
// Its name, "views", is the one /readyz and the operators' docs know.
func (v *Builder) FullJob(schedule string) cron.Job {
	return cron.Job{Name: "views", Schedule: schedule, Run: v.full}
}

func (v *Builder) full(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.source != nil {
		if err := v.follow(ctx); !errors.Is(err, follow.ErrNoSource) {
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
	plan := &loadPlan{v: v}
	if cur != nil && !plan.fits() {
		return nil
	}
	defer plan.end()
	if cur != nil {
		plan.published, err = v.reload(ctx, conn, o, cur, plan)
	} else {
		plan.published, err = v.firstLoad(ctx, conn, o, plan)
	}
	return err
}

// reload loads a new state beside cur, the state published, and
// publishes it: listings and history in one pass over the parts,
// sharing unchanged strings with cur's replica, so that the old state
// and one new replica are all that coexist.
func (v *Builder) reload(ctx context.Context, conn driver.Conn, o analytics.ReplicaOptions, cur *served.State, plan *loadPlan) (*replica.Replica, error) {
	gen := o.Generation
	o.History, o.Share = true, cur.Replica
	var from analytics.Watermarks
	o.ReadFrom = func(w analytics.Watermarks) { from = w }
	plan.twoStates()
	full, err := analytics.LoadReplica(ctx, conn, o)
	if err != nil {
		return nil, fmt.Errorf("generation %d: %w", gen, err)
	}
	if full, err = v.withChanges(ctx, conn, full); err != nil {
		return nil, err
	}
	snapshots, err := analytics.CountSnapshots(ctx, conn, full.Info().ReadingsMark)
	if err != nil {
		return nil, err
	}
	if v.onBuild != nil {
		v.onBuild()
	}
	plan.beforeBuild()
	if err := v.publish(full, nil, snapshots, "full", memory.BuildGC); err != nil {
		return nil, err
	}
	v.readFrom = cursor{full.Info().Generation, from}
	return full, nil
}

// firstLoad loads the first state after a restart and publishes it: the
// bare replica first, then its history and figures.
func (v *Builder) firstLoad(ctx context.Context, conn driver.Conn, o analytics.ReplicaOptions, plan *loadPlan) (*replica.Replica, error) {
	gen := o.Generation
	// After a restart, the bare replica first: listings are served while
	// history and figures load.
	o.Counted = plan.growing
	var from analytics.Watermarks
	o.ReadFrom = func(w analytics.Watermarks) { from = w }
	r, err := analytics.LoadReplica(ctx, conn, o)
	plan.grown()
	if err != nil {
		return nil, fmt.Errorf("replica generation %d: %w", gen, err)
	}
	v.pub.Publish(&served.State{Replica: r})
	v.log.Info("replica published", "generation", gen, "listings", r.Len(), "load_time", r.Info().LoadTime.Round(time.Millisecond))
	// Searches scan the text until its index is built: after the first
	// answer, so that it does not wait for the index.
	v.indexText(r)
	gen++
	plan.twoStates() // the bare replica and the full one
	start := time.Now()
	b := replica.BuilderFrom(r)
	info := r.Info()
	info.Generation, info.HasHistory = gen, true
	if err := analytics.AddHistory(ctx, conn, b, info, v.db.PartSize()); err != nil {
		return nil, fmt.Errorf("history of generation %d: %w", gen, err)
	}
	snapshots, err := analytics.CountSnapshots(ctx, conn, info.ReadingsMark)
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
	v.readFrom = cursor{full.Info().Generation, from}
	return full, nil
}

// cursor is where the next refresh of the state of generation gen reads
// from: the bound its load or refresh read as of (the watermarks read
// when it began), which may be after the state's newest reading when the
// newest crawl is of a listing not served yet.
type cursor struct {
	gen uint64
	wm  analytics.Watermarks
}

// refreshFrom returns where a refresh of r reads from: the bound this
// edge's load of r read as of, or, for a state it did not load (a fleet's
// leader's), r's watermarks less the time its load took and a minute, so
// that a crawl that came during that load is read again (a leader of the
// previous release read no bound).
func (v *Builder) refreshFrom(r *replica.Replica) analytics.Watermarks {
	info := r.Info()
	if v.readFrom.gen == info.Generation && v.readFrom.gen != 0 {
		return v.readFrom.wm
	}
	return analytics.Watermarks{Listings: info.ListingsMark, Readings: info.ReadingsMark.Add(-info.LoadTime - time.Minute)}
}

// progress returns the part-by-part report of a full load: a debug log
// line, and the test hook after the first part.
func (v *Builder) progress(gen uint64) func(done, total int) {
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
func (v *Builder) RefreshJob(schedule string) cron.Job {
	return cron.Job{Name: "refresh", Schedule: schedule, Run: v.refresh}
}

func (v *Builder) refresh(ctx context.Context) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	cur := v.pub.Load()
	if cur == nil || cur.Figures == nil {
		return nil // the full build has not finished yet; it will cover this
	}
	if v.source != nil {
		if err := v.follow(ctx); !errors.Is(err, follow.ErrNoSource) {
			return err
		}
	}
	conn, err := v.db.Conn(ctx)
	if err != nil {
		return err
	}
	r, changed, from, err := analytics.RefreshReplicaFrom(ctx, conn, cur.Replica, v.nextGeneration(), v.refreshFrom(cur.Replica))
	if err != nil {
		return fmt.Errorf("refresh: %w", err)
	}
	if changed == 0 {
		v.readFrom = cursor{cur.Replica.Info().Generation, from}
		return nil
	}
	log, err := analytics.RefreshChanges(ctx, conn, cur.Replica, r, cur.Replica.Changes(), v.changesFrom(r.Info()))
	if err != nil {
		return err
	}
	r = r.WithChanges(log)
	snapshots, err := analytics.CountSnapshots(ctx, conn, r.Info().ReadingsMark)
	if err != nil {
		return err
	}
	// Built from the figures published: the merge says which listings
	// it replaced (replica.Merge), so the listing queries' sort orders
	// are merged as a follower's after a delta, not sorted again (the
	// cheaper build, BenchmarkBuildAfterDelta), on cores the leader's
	// followers, building beside it, share.
	if err := v.publish(r, cur.Figures, snapshots, "refresh", nil, "changed", changed); err != nil {
		return err
	}
	v.readFrom = cursor{r.Info().Generation, from}
	if v.source != nil {
		// A fleet's leader keeps the pages for its next refresh, which
		// its followers wait for (collectKeeping); a single edge
		// collects the replaced state as it allocates.
		v.collectKeeping(r.Len(), false)
	}
	v.indexText(r) // none to build when r shares the text of the replica it came from
	return nil
}
