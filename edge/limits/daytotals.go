package limits

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/edge-stats/edge/analytics/usagelog"
)

// dayTotals are the fleet's counts of one day: the day read whole, plus
// every batch read since. Syncs add to it; calls read it.
type dayTotals struct {
	day    int64 // days since 1970-01-01
	shards [64]totalsShard
	// floor holds, once subjects have been evicted to bound the totals,
	// the largest count evicted into each slot (by subject hash): a
	// subject not in the shards counts at least its slot's floor, which
	// is at least its own count, so an eviction never admits a call past
	// a day.
	floor atomic.Pointer[[floorSlots]atomic.Uint32]
	gen   atomic.Uint64 // bumped after each Sync's additions
	read  atomic.Int64  // unix nanoseconds of the last successful read
	pos   usagelog.Pos  // where the next read starts (Usage.syncMu)
}

type totalsShard struct {
	mu sync.RWMutex
	m  map[uint64]uint64 // subject hash → calls
}

func newDayTotals(day int64, totals map[string]uint64) *dayTotals {
	t := &dayTotals{day: day}
	for i := range t.shards {
		t.shards[i].m = make(map[uint64]uint64, len(totals)/len(t.shards))
	}
	for s, n := range totals {
		h := subjectHash(s)
		t.shards[h%64].m[h] += n
	}
	return t
}

// floorSlots is the size of a dayTotals' floor: 4 MiB, made only when
// the totals pass their bound.
const floorSlots = 1 << 20

func (t *dayTotals) get(h uint64) uint64 {
	sh := &t.shards[h%64]
	sh.mu.RLock()
	n, ok := sh.m[h]
	sh.mu.RUnlock()
	if !ok {
		if f := t.floor.Load(); f != nil {
			return uint64(f[h%floorSlots].Load())
		}
	}
	return n
}

func (t *dayTotals) add(h, n uint64) {
	sh := &t.shards[h%64]
	sh.mu.Lock()
	old, ok := sh.m[h]
	if !ok {
		if f := t.floor.Load(); f != nil {
			old = uint64(f[h%floorSlots].Load()) // an evicted subject resumes from its floor
		}
	}
	sh.m[h] = old + n
	sh.mu.Unlock()
}

// bound evicts the subjects with the fewest calls until at most 7/8 of
// max remain, each into the floor. Only Sync calls it.
func (t *dayTotals) bound(max int) (evicted int) {
	if max <= 0 || t.Len() <= max {
		return 0
	}
	f := t.floor.Load()
	if f == nil {
		f = new([floorSlots]atomic.Uint32)
		t.floor.Store(f)
	}
	target := max / 8 * 7
	for fewest := uint64(1); t.Len() > target; fewest *= 2 {
		for i := range t.shards {
			sh := &t.shards[i]
			sh.mu.Lock()
			for h, n := range sh.m {
				if n > fewest {
					continue
				}
				slot := &f[h%floorSlots]
				if c := uint32(min(n, 1<<32-1)); c > slot.Load() {
					slot.Store(c)
				}
				delete(sh.m, h)
				evicted++
			}
			sh.mu.Unlock()
		}
	}
	return evicted
}

// Len returns the number of subjects with calls in the totals.
func (t *dayTotals) Len() int {
	n := 0
	for i := range t.shards {
		t.shards[i].mu.RLock()
		n += len(t.shards[i].m)
		t.shards[i].mu.RUnlock()
	}
	return n
}

// subjectHash is a subject's key in the totals: a 64-bit hash of its
// stored form (two of a million subjects collide with odds of 1 in 30
// million; they would then share one count, refusing early).
func subjectHash(s string) uint64 { return xxhash.Sum64String(s) }

// minuteWidth is the width of one part of a minute window.
const minuteWidth = int64(time.Minute) / parts

// entry holds a subject's calls of the last minute and what this edge
// counted for it on one day that the published totals do not hold yet.
type entry struct {
	mu       sync.Mutex
	hash     uint64 // subjectHash of the subject
	day      int64
	unsent   uint64 // not written yet
	inflight uint64 // being written by Sync
	sent     uint64 // written, not yet read back into the totals
	dead     bool   // removed from the map: look it up again
	// seen and seenGen are the totals base was read from, for day seenDay:
	// a call reads the fleet's total only when the totals change.
	seen    *dayTotals
	seenGen uint64
	seenDay int64
	base    uint64
	minute  ring // calls of the last minute, admitted or refused for the day
	rsv     reservations
}
