// Package memory is the edge process's memory policy: the soft limit of
// the Go heap (a flag, GOMEMLIMIT or the cgroup's, less the answer
// cache's share: Limit), and the collector's settings around the large
// allocations of the jobs (a bare replica loading, a full build with two
// states live) and the collections that give a replaced state's pages
// back, or keep them for a fleet edge's next build (CollectKeeping). The
// state builder (package builder), the editions job (package cron) and
// the binary (cmd/edge) use it; it uses only the runtime, so it sits
// below all of them.
package memory

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// ReloadGCPercent is the collector's GOGC while a full reload runs.
const ReloadGCPercent = 10

// bareLoadBytes is the heap a listing may take while the bare replica
// loads after a restart (the replica is about 670 B a listing; the rest
// is room for the read's garbage). See GrowGC.
const bareLoadBytes = 1536

// LowerGC lowers the collector's GOGC to at most to (leaving a lower
// setting, or GOGC=off, alone) and returns what restores it.
func LowerGC(to int) (restore func()) {
	prev := debug.SetGCPercent(to)
	if prev < to {
		debug.SetGCPercent(prev)
	}
	return func() { debug.SetGCPercent(prev) }
}

// GrowGC sets the collector for a heap that only grows to hold n
// listings: no collection by GOGC, one when the heap reaches
// bareLoadBytes a listing (or the memory limit, if lower). At GOGC 100 a
// collection ran each time the heap doubled, each marking the whole
// replica read so far (at 5M listings, about half the load's CPU); by the
// goal, a few run, near its end, and the load's peak RSS is bounded by
// the goal rather than by twice the replica. It returns what restores
// both settings.
func GrowGC(n int) (restore func()) {
	return hold(func(int64) int64 { return int64(n)*bareLoadBytes + 256<<20 })
}

// buildBytes is what a full build may add to the process's memory, a
// listing, before the collector runs: the new figures (about 180 B) and
// the build's garbage (about 180 B). See BuildGC.
const buildBytes = 400

// BuildGC sets the collector for a full build of n listings' figures,
// which a reload runs with two states live: no collection by GOGC, one
// when the process's memory grows by buildBytes a listing past what it
// holds now (or reaches the memory limit, if lower). At GOGC 10 the
// build's allocations ran two or three collections, each marking both
// states (at 5M listings, 2.5 s of both cores each, and more under
// load): by the goal, none runs unless the build outgrows its estimate,
// and the peak stays where GOGC 10 put it. It returns what restores both
// settings.
func BuildGC(n int) (restore func()) { return HoldGC(int64(n) * buildBytes) }

// DeltaGC sets the collector for a fleet follower's delta of n listings,
// from its read to its figures' publish: its apply (the new replica's
// text, packs and digest: applyBytes a listing, and the listings' array
// when listingsBytes is not 0, no room having been made for it ahead)
// and the build after it (buildBytes a listing), as BuildGC. At 5M
// listings a collection marks the two states (about 4 s of a core
// each, the listings' arrays scanned for their strings); one that
// started during the apply ran on through the build.
func DeltaGC(n int, listingsBytes int64) (restore func()) {
	return HoldGC(int64(n)*(applyBytes+buildBytes) + listingsBytes)
}

// applyBytes is what a delta's apply adds to a follower's heap a listing
// besides the listings' array (BenchmarkBuildAfterDelta measures it;
// bench/README.md holds the figures).
const applyBytes = 128

// HoldGC sets the collector for allocations of about extra bytes that
// stay live: no collection by GOGC, one when the process's memory grows
// by extra past what it holds now (or reaches the memory limit, if
// lower). It returns what restores both settings, once.
//
// The settings are the process's: holds that overlap (edges in one
// process, as in tests, each building at once) share them. The first
// saves the settings before, each raises the goal to its own if higher,
// and the last one's restore puts the settings before back. Restores of
// overlapping holds run in any order: had each put back what it found,
// a hold ended before an inner one left the process with GOGC off and a
// goal just above its heap, a collection every few hundred KB.
func HoldGC(extra int64) (restore func()) {
	return hold(func(held int64) int64 { return held + extra })
}

// hold sets the collector for a hold (HoldGC, GrowGC) whose memory goal
// is goal of what the process holds now, and returns what ends it.
func hold(goal func(held int64) int64) (restore func()) {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	var held int64
	if s[0].Value.Kind() == metrics.KindUint64 && s[1].Value.Kind() == metrics.KindUint64 {
		held = int64(s[0].Value.Uint64() - s[1].Value.Uint64()) // what the memory limit counts
	}
	holds.mu.Lock()
	defer holds.mu.Unlock()
	if holds.n == 0 {
		holds.prevLimit = debug.SetMemoryLimit(-1)
		holds.prevPercent = debug.SetGCPercent(-1)
		holds.goal = 0
	}
	holds.n++
	g := min(goal(held), holds.prevLimit) // an operator's limit wins
	if g > holds.goal {
		holds.goal = g
		debug.SetMemoryLimit(g)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			holds.mu.Lock()
			defer holds.mu.Unlock()
			if holds.n--; holds.n == 0 {
				debug.SetMemoryLimit(holds.prevLimit)
				debug.SetGCPercent(holds.prevPercent)
			}
		})
	}
}

// holds is the collector's settings while holds (HoldGC, GrowGC) hold
// them: how many are open, the settings before the first, and the goal
// set; and the GOGC an operator set and the one KeepRoom set over it. It
// is the process's, as the settings are.
var holds struct {
	mu          sync.Mutex
	n           int
	prevLimit   int64
	prevPercent int
	goal        int64
	basePercent int  // the operator's GOGC (see KeepRoom)
	keepPercent int  // the GOGC the last KeepRoom set
	keepSet     bool // a KeepRoom set keepPercent
}

// setGC sets the collector's GOGC to to, unless GOGC=off, and returns
// what restores it.
func setGC(to int) (restore func()) {
	prev := debug.SetGCPercent(to)
	if prev < 0 {
		debug.SetGCPercent(prev)
	}
	return func() { debug.SetGCPercent(prev) }
}

// CollectReplaced collects the state a full load replaced, once, when the
// job ends (deferred after the collector's GOGC is restored), and returns
// the freed pages to the system, so RSS settles at the state's size
// rather than over the background scavenger's many minutes. The
// collection (debug.FreeOSMemory runs one) runs at GOGC 100, so that its
// goal lies well above the heap it starts on: a forced collection whose
// goal is the heap itself makes requests that allocate during its mark
// (15 s for a 6 GB heap) wait on it.
func CollectReplaced() {
	defer setGC(100)()
	debug.FreeOSMemory()
}

// Collect runs one collection at GOGC 100 (see CollectReplaced) and
// waits for it, leaving the freed pages to the heap.
func Collect() {
	defer setGC(100)()
	runtime.GC()
}

// CollectKeeping collects what a build of n listings left (the state it
// replaced, the build's garbage) once its state is published, as
// Collect, and keeps the freed pages for the next build of about as
// many listings (a fleet follower's delta, a leader's refresh): a new
// replica's text, packs and digest and new figures (applyBytes and
// buildBytes a listing) and a new listings array (listingsBytes), which
// the caller may make ahead and hold until then (spareAhead: a
// follower's spare).
//
// Go returns to the system the free pages that lie more than a tenth
// past the heap's goal (its background scavenger, within seconds of a
// collection) and debug.FreeOSMemory returns them all; the next build
// then writes to pages the system gives again, each at the cost of a
// page fault, which on a VM whose host takes back the pages its guest
// frees is a large part of a follower's delta (the figures are in
// bench/README.md, The time to a follower's publish). So the collector's
// goal covers the next build until then (KeepRoom). The process's RSS stays near a build's
// peak between builds, which is what it is provisioned for.
func CollectKeeping(n int, listingsBytes int64, spareAhead bool) {
	extra, ahead := int64(n)*(applyBytes+buildBytes), int64(0)
	if spareAhead {
		ahead = listingsBytes
	} else {
		extra += listingsBytes
	}
	KeepRoom(extra, ahead)
}

// maxKeepPercent bounds the GOGC KeepRoom sets, for a heap much smaller
// than the room it keeps (a state of a few listings).
const maxKeepPercent = 200

// KeepRoom collects, as Collect, and then sets the collector's GOGC so
// that its goal lies extra bytes past the live heap and the ahead bytes
// the caller is about to allocate and hold, until the next call: the
// scavenger keeps the pages under the goal, so the next build, which
// allocates about extra, finds them. The GOGC is never below the
// operator's (the GOGC found when the process's GOGC is not one a
// KeepRoom set) nor above maxKeepPercent. A memory limit bounds the goal
// as ever. Requests' garbage may fill the room before the build comes:
// the build's allocations then start a collection, as they did at the
// operator's GOGC, that gives the room back. With GOGC=off
// (an operator's) it only collects. While holds are open (another edge
// of the process building, or a first state read under GrowGC), the
// GOGC set is the one their last restore puts back.
//
// The goal is reckoned from the heap the collection marked, which the
// ahead bytes are not in: so that making them starts no collection, the
// room counts them (at 5M listings a follower's 2.3 GB spare did, a
// collection marking 6.8 GB the moment its goal fell below the spare).
// Once a later collection marks them, the goal lies past the room by
// their share of it too; the memory limit and maxKeepPercent bound it,
// and the next build's KeepRoom sets it again.
//
// The scavenger's goal is the heap in use when the last collection
// ended (here, the replaced state and the build's garbage still in it)
// scaled by the new goal over that collection's. Collect's goal (twice
// the heap marked before, or a hold's memory goal) is no higher than
// the heap a build left, so the new goal is about what it keeps.
func KeepRoom(extra, ahead int64) {
	Collect()
	live, _ := HeapNow()
	holds.mu.Lock()
	defer holds.mu.Unlock()
	open := holds.n > 0
	now := gogc()
	if open {
		now = holds.prevPercent
	}
	if !holds.keepSet || now != holds.keepPercent {
		holds.basePercent = now // the operator's, or a test's
	}
	if holds.basePercent < 0 {
		return // GOGC=off: the memory limit alone
	}
	p := keepPercent(holds.basePercent, live, ahead+extra)
	holds.keepPercent, holds.keepSet = p, true
	if open {
		holds.prevPercent = p
		return
	}
	debug.SetGCPercent(p)
}

// gogc reads the collector's GOGC (-1: off).
func gogc() int {
	s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 100
	}
	if p := s[0].Value.Uint64(); p <= math.MaxInt32 {
		return int(p)
	}
	return -1
}

// keepPercent is the GOGC whose goal lies extra bytes past a live heap of
// live bytes: at least base, at most maxKeepPercent.
func keepPercent(base int, live, extra int64) int {
	if live <= 0 {
		return base
	}
	p := int((extra*100 + live - 1) / live)
	return max(base, min(p, maxKeepPercent))
}

// HeapNow reads the live heap of the last collection and the soft memory
// limit (GOMEMLIMIT, --memory-limit or the cgroup's, see Limit).
func HeapNow() (live, limit int64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = int64(s[0].Value.Uint64())
	}
	return live, debug.SetMemoryLimit(-1)
}
