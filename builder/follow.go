package builder

import (
	"context"
	"errors"
	"time"

	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/internal/memory"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// Source is where an edge of a fleet takes its state from instead
// of loading it from ClickHouse (package fleet/exchange).
type Source interface {
	// Fetch returns the source's newest state when its tag differs from
	// have: a replica read as o says (its generation, the replica it
	// replaces, what is told the count of its listings; the source sets
	// the bound on its size), the count of readings its figures report,
	// and its tag. It returns a nil replica and have when have is
	// current, and an error wrapping follow.ErrNoSource when the edge should
	// load from ClickHouse itself.
	Fetch(ctx context.Context, have string, o replica.ReadOptions) (r *replica.Replica, snapshots int64, tag string, err error)
}

// ErrNoRoom says a source has a newer state for this edge only whole,
// and a whole state does not fit beside the one it holds
// (replica.ReadOptions.NoWhole): the edge keeps its state and asks again.
var ErrNoRoom = errors.New("a whole state does not fit beside the one held")

// FollowFrom makes the builder take its state from src when it has one:
// the full and incremental jobs ask src first and load from ClickHouse
// only when it says follow.ErrNoSource, and FollowJob asks it often. Set it
// before the jobs start.
func (v *Builder) FollowFrom(src Source) { v.source = src }

// OnPublish sets what is given every state to be published with figures
// (a fleet's publisher), before its figures are built. Set it before the
// jobs start.
func (v *Builder) OnPublish(f func(r *replica.Replica, snapshots int64)) { v.onPublish = f }

// FollowedTag returns the tag of the fleet state published ("" when the
// published state was loaded from ClickHouse): what the source's watch
// asks a newer state than (exchange.Follower.Watch).
func (v *Builder) FollowedTag() string {
	if t := v.tagNow.Load(); t != nil {
		return *t
	}
	return ""
}

// FollowJob returns the job that asks the state source for a newer state
// and publishes it; it does nothing when there is none to follow.
func (v *Builder) FollowJob(schedule string) cron.Job {
	return cron.Job{Name: "follow", Schedule: schedule, Quiet: true, Run: v.FollowNow}
}

// FollowNow takes the source's newest state, if it has a newer one, as
// the follow job does: what a fleet's member calls the moment the
// leader publishes. It waits for a load or a follow in progress.
func (v *Builder) FollowNow(ctx context.Context) error {
	if v.source == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.follow(ctx); err != nil && !errors.Is(err, follow.ErrNoSource) {
		return err
	}
	return nil
}

// follow publishes the source's state when it is newer than the one
// published. It runs with v.mu held. An error wrapping follow.ErrNoSource says
// the caller should load from ClickHouse.
func (v *Builder) follow(ctx context.Context) error {
	v.heavy.Lock()
	defer v.heavy.Unlock()
	cur := v.pub.Load()
	var prev *replica.Replica
	var prevFigures *figures.Figures // a delta's build starts from them
	noRoom := false
	if cur != nil {
		prev, prevFigures = cur.Replica, cur.Figures
		// A whole state needs about the live heap again; a delta fits
		// where it would not, and a leader (follow.ErrNoSource) refreshes on
		// its own, so the source is asked whatever the room.
		noRoom = cur.Figures != nil && !v.secondStateFits()
	}
	// Most asks find nothing new (a 304): the memory policy of a load
	// (a lower GOGC, a collection after) only once a state came.
	start := time.Now()
	spare := v.spare.Load()
	plan := &followPlan{v: v, spare: spare, first: cur == nil, endBuilding: func() {}, restore: func() {}, restoreGC: func() {}}
	defer plan.end()
	o := replica.ReadOptions{Generation: v.nextGeneration(), Prev: prev, NoWhole: noRoom, Spare: spare, Counted: plan.counted, Delta: plan.delta}
	r, snapshots, tag, err := v.source.Fetch(ctx, v.tag, o)
	whole, deltaGC := plan.whole, plan.deltaGC
	intoSpare := plan.fetched(r, err)
	if errors.Is(err, ErrNoRoom) {
		v.waits.Add(1)
		v.reloadFits() // says why, with the figures
		return nil
	}
	if err != nil || r == nil {
		return err
	}
	v.log.Info("fleet state read", "generation", r.Info().Generation, "listings", r.Len(), "took", time.Since(start).Round(time.Millisecond),
		"whole", whole, "into_spare", intoSpare)
	if cur != nil && goesBack(r, cur.Replica) {
		v.refuseOlder(r, cur.Replica, tag)
		return nil
	}
	// Room for the next delta's listings, made once this state is
	// published and the one it replaced collected (the defers below run
	// first).
	defer v.makeSpare(r.Len())
	// The replaced state collected once published, its pages kept for
	// the next delta's (memory.CollectKeeping), from the first state
	// on: a delta comes every refresh and needs them again.
	defer v.collectKeeping(r.Len(), true)
	if cur != nil && !deltaGC {
		defer memory.LowerGC(memory.ReloadGCPercent)()
	}
	if cur == nil {
		// A first state: its listings are served while the figures build.
		v.pub.Publish(&served.State{Replica: r})
		v.log.Info("replica published", "generation", r.Info().Generation, "listings", r.Len(), "from", "fleet")
		v.indexText(r)
	} else if v.onBuild != nil {
		v.onBuild()
	}
	if whole {
		// The read's garbage out before the build's allocations. A
		// delta's read leaves little (its new listings share the
		// state's strings and histories), and a collection marks the
		// whole heap: at 5M listings, seconds of both cores between the
		// leader's publish and this edge's.
		memory.Collect()
	}
	gc := memory.BuildGC
	if deltaGC {
		gc = func(int) func() { return func() {} } // set since the delta's header, restored by followPlan.end
	}
	if err := v.publish(r, prevFigures, snapshots, "fleet", gc, "tag", tag); err != nil {
		return err
	}
	v.tag = tag
	v.tagNow.Store(&tag)
	v.indexText(r)
	return nil
}

// refuseOlder keeps the state served, cur, instead of the source's
// newest, r, which is older (this edge loaded from ClickHouse while it
// could not follow), and has the source asked for a state newer than r,
// whole, since this edge does not hold r to apply a delta to.
func (v *Builder) refuseOlder(r, cur *replica.Replica, tag string) {
	ri, ci := r.Info(), cur.Info()
	v.log.Warn("fleet state refused: older than the state served; waiting for a newer one", "tag", tag,
		"readings", ri.ReadingsMark, "listings", ri.ListingsMark, "served_readings", ci.ReadingsMark, "served_listings", ci.ListingsMark)
	v.refusedOld.Add(1)
	v.tag = tag
	v.tagNow.Store(&tag)
	if s, ok := v.source.(interface{ Refused(tag string) }); ok {
		s.Refused(tag)
	}
}

// ErrGoesBack says a state read is older than the one served: it is not
// published (goesBack).
var ErrGoesBack = errors.New("the state read is older than the one served")

// goesBack reports whether r holds older data than cur, the state served:
// its newest reading or its newest metadata crawl is before cur's. No
// publish takes an edge's data back in time, whatever the state's source
// (a fleet's leader, or ClickHouse behind a lagging replica).
func goesBack(r, cur *replica.Replica) bool {
	ri, ci := r.Info(), cur.Info()
	return ri.ReadingsMark.Before(ci.ReadingsMark) || ri.ListingsMark.Before(ci.ListingsMark)
}

// StatesRefused returns how many states were not published because they
// were older than the one served (goesBack).
func (v *Builder) StatesRefused() int64 { return v.refusedOld.Load() }
