package builder

import (
	"math"
	"time"
	"unsafe"

	"github.com/edge-stats/edge/internal/lowprio"
	"github.com/edge-stats/edge/internal/memory"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
)

// makeSpare makes room ahead for the listings of the next delta a
// follower applies (replica.Spare), for n listings and some more, on a
// thread of the lowest priority, unless one is there or being made. The
// apply of a delta writes a new array of every listing; on a VM whose
// host takes back the pages a guest frees, writing it to new pages costs
// a fault a page, seconds at millions of listings, between the leader's
// publish and the follower's.
// A follower makes it in the minutes between two deltas, where it
// delays nothing. It holds the array's size (448 bytes a listing) until
// the next delta, whose apply would allocate as much: it raises the
// follower's steady memory, not its peak (the peak of a delta's apply and
// build holds that array either way). It is made only when it and the
// rest of a delta's read (deltaReadBytes a listing) fit under the memory
// limit beside the live heap.
func (v *Builder) makeSpare(n int) {
	if v.spare.Load() != nil || !v.spareMaking.CompareAndSwap(false, true) {
		return
	}
	room := spareRoom(n)
	bytes := int64(room) * int64(unsafe.Sizeof(views.Listing{}))
	if live, limit := v.memory(); limit > 0 && limit != math.MaxInt64 && live+bytes+int64(n)*deltaReadBytes > limit {
		v.spareMaking.Store(false)
		v.log.Info("no spare for the next delta: it would not fit beside the heap", "live_mib", live>>20, "limit_mib", limit>>20, "spare_mib", bytes>>20)
		return
	}
	go lowprio.Run(func() {
		defer v.spareMaking.Store(false)
		start := time.Now()
		sp := replica.NewSpare(room)
		// Given to the next delta at once: one that comes while the
		// pages are written takes the array as it is (a second array
		// beside it would not fit where the spare was sized to).
		v.spare.Store(sp)
		written := sp.Write()
		v.log.Info("spare made for the next delta", "listings", room, "mib", bytes>>20, "took", time.Since(start).Round(time.Millisecond),
			"every_page", written)
	})
}

// collectAfterLoad collects what a full load replaced and left: for a
// fleet's edge, keeping the pages for the next refresh or delta of
// published's listings (collectKeeping); for a single edge, returning
// them to the system, so that RSS settles at the state's size
// (memory.CollectReplaced).
func (v *Builder) collectAfterLoad(published *replica.Replica) {
	if v.source != nil && published != nil {
		v.collectKeeping(published.Len(), false)
		return
	}
	memory.CollectReplaced()
}

// collectKeeping collects what a build of n listings left and keeps the
// freed pages for the next build of a fleet's edge: a follower's delta
// or a leader's refresh, each a new listings array (the spare's size,
// spareRoom), a new replica's text and packs and new figures
// (memory.CollectKeeping). A follower makes the array ahead
// (spareAhead: makeSpare, after this).
func (v *Builder) collectKeeping(n int, spareAhead bool) {
	v.keepRoom(n, int64(spareRoom(n))*int64(unsafe.Sizeof(views.Listing{})), spareAhead)
}

// spareRoom is the count of listings the room made ahead for the next
// delta holds, for a state of n: n and the listings a refresh may add.
func spareRoom(n int) int { return n + n/64 + 1024 }

// SpareListings returns the count of listings the room made ahead for
// the next delta holds (0: none; see makeSpare).
func (v *Builder) SpareListings() int { return v.spare.Load().Cap() }

// deltaReadBytes is what a delta's read adds to a follower's heap a
// listing besides the listings' array: the new replica's text index,
// packs and digest (BenchmarkBuildAfterDelta measures it; bench/README.md
// holds the figures).
const deltaReadBytes = 128

// reloadFits reports whether a full reload fits beside the published
// state under the memory limit: while it runs, the old state and a new
// one about as large are both live, so it needs about the live heap again.
// When it would not fit, the reload waits for a later run (the
// incremental refresh keeps figures current meanwhile) instead of pushing
// the process past its limit.
func (v *Builder) reloadFits() bool {
	if v.secondStateFits() {
		return true
	}
	live, limit := v.memory()
	v.log.Warn("full reload waits: a second state would not fit under the memory limit; raise the limit or lower --cache-mb",
		"live_mib", live>>20, "needed_mib", 2*live>>20, "limit_mib", limit>>20)
	return false
}

// secondStateFits is reloadFits without its warning.
func (v *Builder) secondStateFits() bool {
	live, limit := v.memory()
	return limit <= 0 || limit == math.MaxInt64 || 2*live <= limit
}
