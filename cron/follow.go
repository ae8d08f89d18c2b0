package cron

import (
	"context"
	"errors"
	"time"
	"unsafe"

	"github.com/edge-stats/edge/cron/memory"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// StateSource is where an edge of a fleet takes its state from instead
// of loading it from ClickHouse (package fleet/exchange).
type StateSource interface {
	// Fetch returns the source's newest state when its tag differs from
	// have: a replica read as o says (its generation, the replica it
	// replaces, what is told the count of its listings; the source sets
	// the bound on its size), the count of readings its figures report,
	// and its tag. It returns a nil replica and have when have is
	// current, and an error wrapping ErrNoSource when the edge should
	// load from ClickHouse itself.
	Fetch(ctx context.Context, have string, o replica.ReadOptions) (r *replica.Replica, snapshots int64, tag string, err error)
}

// ErrNoSource says a state source has nothing to give this edge (it
// leads, there is no leader, or the leader is out of reach): the edge
// loads from ClickHouse.
var ErrNoSource = errors.New("no fleet state to follow")

// ErrNoRoom says a source has a newer state for this edge only whole,
// and a whole state does not fit beside the one it holds
// (replica.ReadOptions.NoWhole): the edge keeps its state and asks again.
var ErrNoRoom = errors.New("a whole state does not fit beside the one held")

// FollowFrom makes the views take their state from src when it has one:
// the full and incremental jobs ask src first and load from ClickHouse
// only when it says ErrNoSource, and FollowJob asks it often. Set it
// before the jobs start.
func (v *Views) FollowFrom(src StateSource) { v.source = src }

// OnPublish sets what is given every state to be published with figures
// (a fleet's publisher), before its figures are built. Set it before the
// jobs start.
func (v *Views) OnPublish(f func(r *replica.Replica, snapshots int64)) { v.onPublish = f }

// FollowedTag returns the tag of the fleet state published ("" when the
// published state was loaded from ClickHouse): what the source's watch
// asks a newer state than (exchange.Follower.Watch).
func (v *Views) FollowedTag() string {
	if t := v.tagNow.Load(); t != nil {
		return *t
	}
	return ""
}

// FollowJob returns the job that asks the state source for a newer state
// and publishes it; it does nothing when there is none to follow.
func (v *Views) FollowJob(schedule string) Job {
	return Job{Name: "follow", Schedule: schedule, Quiet: true, Run: v.FollowNow}
}

// FollowNow takes the source's newest state, if it has a newer one, as
// the follow job does: what a fleet's member calls the moment the
// leader publishes. It waits for a load or a follow in progress.
func (v *Views) FollowNow(ctx context.Context) error {
	if v.source == nil {
		return nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if err := v.follow(ctx); err != nil && !errors.Is(err, ErrNoSource) {
		return err
	}
	return nil
}

// follow publishes the source's state when it is newer than the one
// published. It runs with v.mu held. An error wrapping ErrNoSource says
// the caller should load from ClickHouse.
func (v *Views) follow(ctx context.Context) error {
	v.heavy.Lock()
	defer v.heavy.Unlock()
	cur := v.pub.Load()
	var prev *replica.Replica
	var prevFigures *figures.Figures // a delta's build starts from them
	noRoom := false
	if cur != nil {
		prev, prevFigures = cur.Replica, cur.Figures
		// A whole state needs about the live heap again; a delta fits
		// where it would not, and a leader (ErrNoSource) refreshes on
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
		gc = func(int) func() { return func() {} } // set since the delta's header, ended by endGC
	}
	if err := v.publish(r, prevFigures, snapshots, "fleet", gc, "tag", tag); err != nil {
		return err
	}
	v.tag = tag
	v.tagNow.Store(&tag)
	v.indexText(r)
	return nil
}

// followPlan is the memory steps of taking a state from the fleet's
// leader, from the state's header to the collection after its publish:
// the views marked building from the header on; a whole state's listings
// read with the spare's room given back to the heap, and a first state's
// with a heap that only grows (memory.GrowGC); a delta's apply and the
// build after it under one setting of the collector (memory.DeltaGC),
// restored once, after the collection that follows the publish (a
// collection started in the apply ran on through the build, and one
// ended at the publish found the heap of two states at its goal and
// marked both: at 5M listings, 7.8 GB and 2.3–3.5 s just before the
// collection that keeps the room marked one).
type followPlan struct {
	v                    *Views
	spare                *replica.Spare
	first                bool // no state published yet
	whole                bool // a whole state was read (a delta's read counts none)
	building, deltaGC    bool
	endedGC              bool
	endBuilding, restore func()
	restoreGC            func()
}

// markBuilding marks the views building, once: from the state's header
// (a delta's or a whole state's) to its publish, the read and build come
// first (Views.Building).
func (p *followPlan) markBuilding() {
	if !p.building {
		p.building, p.endBuilding = true, p.v.startBuilding()
	}
}

// counted is told a whole state's count of listings: a whole state has
// no use for the spare, whose room goes back to the heap before the
// listings are read.
func (p *followPlan) counted(n int) {
	p.whole = true
	if p.first {
		p.restore = memory.GrowGC(n)
	}
	p.spare.Drop()
	p.markBuilding()
}

// delta is told a delta's count of listings: the collector's setting for
// the apply and the build, set at a chain's first delta.
func (p *followPlan) delta(n int) {
	p.markBuilding()
	if p.deltaGC {
		return // a chain's later delta: set at the first
	}
	var array int64
	if p.spare.Cap() < n {
		array = int64(n) * int64(unsafe.Sizeof(views.Listing{}))
	}
	p.restoreGC, p.deltaGC = memory.DeltaGC(n, array), true
}

// fetched settles the spare once the source answered (r, err), and
// reports whether the delta was read into it: the spare is taken by the
// delta, dropped for a whole state, too small for the state read (the
// next is made for this state), or this edge now leads and loads its
// states itself.
func (p *followPlan) fetched(r *replica.Replica, err error) (intoSpare bool) {
	spare := p.spare
	intoSpare = spare != nil && r != nil && !p.whole && spare.Cap() == 0
	if spare != nil && (r != nil || spare.Cap() == 0 || errors.Is(err, ErrNoSource)) {
		spare.Drop()
		p.v.spare.CompareAndSwap(spare, nil)
	}
	return intoSpare
}

// end restores what the plan set, in the order it was set, last first:
// the delta's collector setting (after the collection that follows the
// publish), a first state's growing heap, the views' building mark.
func (p *followPlan) end() {
	if !p.endedGC {
		p.endedGC = true
		p.restoreGC()
	}
	p.restore()
	p.endBuilding()
}
