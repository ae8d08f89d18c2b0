package builder

import (
	"errors"
	"unsafe"

	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/internal/memory"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
)

// loadPlan is the memory steps of a full load from ClickHouse, from the
// check that a second state fits to the collection after the publish:
//   - a reload waits for a later run when a second state would not fit
//     beside the one served (fits);
//   - a first load's bare replica is read with a heap that only grows,
//     which every collection would mark whole: the collector runs by a
//     memory goal meanwhile (growing, grown; memory.GrowGC);
//   - while two states are live (a reload's, or the bare replica and the
//     full one), the collector runs closer to the live heap, which costs
//     the job CPU and keeps the peak RSS near the two states (twoStates;
//     memory.LowerGC);
//   - before a reload builds its figures, one collection of the dropped
//     answers and what the load left, so that the build, which runs
//     without one (memory.BuildGC), starts from the two states alone
//     (beforeBuild);
//   - at the end, the settings restored, last first; what the load
//     freed collected (a single edge returns the pages, so that RSS
//     settles at the state's size; a fleet's leader keeps them for its
//     next refresh: collectAfterLoad); then the text index of the new
//     state, once the replaced state is collected (built before, it
//     would add to the peak, where two states are live; searches scan
//     until then; none to build when it shares the replaced state's).
//
// A follower's steps are followPlan's.
type loadPlan struct {
	v *Builder
	// published is the state the load published (nil: none).
	published *replica.Replica
	restores  []func()
	grow      func()
}

// fits reports whether a reload fits beside the state served; when it
// does not, the reload is counted as waiting (Builder.ReloadsWaiting).
func (p *loadPlan) fits() bool {
	if p.v.reloadFits() {
		return true
	}
	p.v.waits.Add(1)
	return false
}

// growing is told the count of a first load's listings.
func (p *loadPlan) growing(n int) { p.grow = memory.GrowGC(n) }

// grown ends growing once the bare replica is read.
func (p *loadPlan) grown() {
	if p.grow != nil {
		p.grow()
		p.grow = nil
	}
}

// twoStates lowers the collector's goal until the plan ends.
func (p *loadPlan) twoStates() {
	p.restores = append(p.restores, memory.LowerGC(memory.ReloadGCPercent))
}

// beforeBuild collects once before a reload builds its figures.
func (p *loadPlan) beforeBuild() { memory.Collect() }

// end restores what the plan set and collects what the load left, then
// indexes the published state's text.
func (p *loadPlan) end() {
	p.grown()
	for i := len(p.restores) - 1; i >= 0; i-- {
		p.restores[i]()
	}
	p.v.collectAfterLoad(p.published)
	if p.published != nil {
		p.v.indexText(p.published)
	}
}

// followPlan is the memory steps of taking a state from the fleet's
// leader, from the state's header to the collection after its publish:
// the builder marked building from the header on; a whole state's listings
// read with the spare's room given back to the heap, and a first state's
// with a heap that only grows (memory.GrowGC); a delta's apply and the
// build after it under one setting of the collector (memory.DeltaGC),
// restored once, after the collection that follows the publish: a
// collection started in the apply would run on through the build, and
// one ending at the publish would find the heap of two states at its
// goal and mark both, just before the collection that keeps the room
// marks one.
type followPlan struct {
	v                    *Builder
	spare                *replica.Spare
	first                bool // no state published yet
	whole                bool // a whole state was read (a delta's read counts none)
	building, deltaGC    bool
	endBuilding, restore func()
	restoreGC            func()
}

// markBuilding marks the builder building, once: from the state's header
// (a delta's or a whole state's) to its publish, the read and build come
// first (Builder.Building).
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
// reports whether the delta was read into it (a delta's apply that takes
// the spare's array leaves it empty: Cap 0). The spare is let go when a
// state came (taken by its delta, unused by a whole state, or too small
// for it: the next is made for this state), when it was taken by a read
// that failed, or when this edge now leads and loads its states itself.
func (p *followPlan) fetched(r *replica.Replica, err error) (intoSpare bool) {
	spare := p.spare
	intoSpare = spare != nil && r != nil && !p.whole && spare.Cap() == 0
	if spare != nil && (r != nil || spare.Cap() == 0 || errors.Is(err, follow.ErrNoSource)) {
		spare.Drop()
		p.v.spare.CompareAndSwap(spare, nil)
	}
	return intoSpare
}

// end restores what the plan set: the delta's collector setting (end is
// deferred first, so it runs after the collection that follows the
// publish), a first state's growing heap, then the builder's building
// mark, which waiting work watches and so is lifted last.
func (p *followPlan) end() {
	p.restoreGC()
	p.restore()
	p.endBuilding()
}
