package limits

import (
	"hash/maphash"
	"math"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// parts is the number of parts a window's span is cut into. A key keeps
// a count per part for the last parts+1 parts, so an event counts for
// between one span and one span plus a part: never less than the span
// (no over-admission), at most 1/60 longer, in constant memory whatever
// the limit.
const parts = 60

// Windows counts events per key over a sliding window: at most limit
// events in any span. Checking and recording happen under one lock, so
// concurrent callers are never admitted past the limit. Keys idle for a
// span are forgotten. It is safe for concurrent use.
type Windows[K comparable] struct {
	limit    uint32
	width    int64 // nanoseconds of one part
	seed     maphash.Seed
	hash     func(maphash.Seed, K) uint64
	keys     atomic.Int64 // keys held, so that Full on an empty counter takes no lock
	perShard int          // most keys a shard holds
	fewest   bool         // at a full shard, let the sampled key with the fewest events go first
	shards   [64]wshard[K]
}

// DefaultMaxKeys is the most keys a Windows holds unless bounded
// otherwise: about 320 bytes each (a ring of 61 counts and its map slot),
// 20 MiB in all.
const DefaultMaxKeys = 1 << 16

// Bound sets the most keys w holds (DefaultMaxKeys when max is 0 or
// less) and returns w; call it before w is used. When a key comes to a
// full shard, the keys whose events all left the window go first, then
// the one, of 16 sampled, whose newest event is oldest: its count
// restarts, which can admit at most the events it had counted, and only
// when more keys than the bound had events within one span.
func (w *Windows[K]) Bound(max int) *Windows[K] {
	if max <= 0 {
		max = DefaultMaxKeys
	}
	w.perShard = (max + len(w.shards) - 1) / len(w.shards)
	return w
}

// EvictFewest makes w, at a full shard, let go the sampled key with the
// fewest events in the window (of those, the one whose newest event is
// oldest) instead of the one whose newest event is oldest, and returns w;
// call it before w is used. A ceiling that must survive a flood of new
// keys (the failed sign-ins at one e-mail address, when an attacker
// floods other addresses to push it out) then goes last: a flood's keys
// each hold few events.
func (w *Windows[K]) EvictFewest() *Windows[K] {
	w.fewest = true
	return w
}

// Len returns the number of keys w holds.
func (w *Windows[K]) Len() int { return int(w.keys.Load()) }

// HashString hashes a string key of Windows.
func HashString(seed maphash.Seed, s string) uint64 { return maphash.String(seed, s) }

// HashAddr hashes an address key of Windows.
func HashAddr(seed maphash.Seed, a netip.Addr) uint64 {
	b := a.As16()
	return maphash.Bytes(seed, b[:])
}

type wshard[K comparable] struct {
	mu     sync.Mutex
	m      map[K]*ring
	swept  int64 // part index of the last sweep
	sweeps int   // sweeps so far (tests)
}

type ring struct {
	counts [parts + 1]uint32
	last   int64 // index of the newest part counted
	total  uint32
}

// NewWindows returns a counter of at most limit events per span and key,
// whose keys hash with hash; limit 0 or less refuses every event.
func NewWindows[K comparable](limit int, span time.Duration, hash func(maphash.Seed, K) uint64) *Windows[K] {
	w := &Windows[K]{limit: limit32(limit), width: max(int64(span)/parts, 1), seed: maphash.MakeSeed(), hash: hash,
		perShard: DefaultMaxKeys / 64}
	for i := range w.shards {
		w.shards[i].m = map[K]*ring{}
	}
	return w
}

func (w *Windows[K]) shard(k K) *wshard[K] {
	return &w.shards[w.hash(w.seed, k)%uint64(len(w.shards))]
}

// Allow records an event for k and reports true if k is under its limit;
// otherwise it records nothing and says how long until an event leaves
// the window.
func (w *Windows[K]) Allow(k K, now time.Time) (bool, time.Duration) {
	return w.take(k, now.UnixNano(), true, true)
}

// Full reports whether k has used its limit, and for how much longer,
// without recording anything.
func (w *Windows[K]) Full(k K, now time.Time) (bool, time.Duration) {
	if w.keys.Load() == 0 && w.limit > 0 {
		return false, 0
	}
	ok, wait := w.take(k, now.UnixNano(), false, true)
	return !ok, wait
}

// Release takes back an event that Allow recorded for k at time at, if
// the window still counts it: a reservation that turned out not to be
// an event (a sign-in attempt that succeeded).
func (w *Windows[K]) Release(k K, at time.Time) {
	part := at.UnixNano() / w.width
	s := w.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.m[k]
	if r == nil || part > r.last || r.last-part > parts {
		return
	}
	if i := part % (parts + 1); r.counts[i] > 0 {
		r.counts[i]--
		r.total--
	}
}

// Add records an event for k whether or not k is within its limit.
func (w *Windows[K]) Add(k K, now time.Time) { w.take(k, now.UnixNano(), true, false) }

// AddAt records an event for k that happened at at (another edge's,
// read later), whether or not k is within its limit: counted from at,
// as it was where it happened. An event from after now counts as of now
// (clocks differ); one that already left the window counts for nothing.
func (w *Windows[K]) AddAt(k K, at, now time.Time) {
	if at.After(now) {
		at = now
	}
	if now.Sub(at) >= time.Duration(w.width*parts) {
		return
	}
	w.take(k, at.UnixNano(), true, false)
}

func (w *Windows[K]) take(k K, now int64, record, respect bool) (bool, time.Duration) {
	part := now / w.width
	s := w.shard(k)
	s.mu.Lock()
	defer s.mu.Unlock()
	if part-s.swept > parts {
		w.sweep(s, part)
	}
	r := s.m[k]
	if r != nil {
		r.advance(part)
	}
	if respect && (w.limit == 0 || r != nil && r.total >= w.limit) {
		return false, r.wait(w.width, part, now)
	}
	if !record {
		return true, 0
	}
	if r == nil {
		if len(s.m) >= w.perShard {
			w.makeRoom(s, part)
		}
		r = &ring{last: part}
		s.m[k] = r
		w.keys.Add(1)
	}
	r.add(part)
	return true, 0
}

// limit32 is a limit of events as a ring counts them: below 0 is 0, and
// above what a ring counts is as many as it counts.
func limit32(n int) uint32 {
	switch {
	case n <= 0:
		return 0
	case uint64(n) > math.MaxUint32:
		return math.MaxUint32
	}
	return uint32(n)
}

// add counts an event in part, the ring's newest.
func (r *ring) add(part int64) {
	r.counts[part%(parts+1)]++
	r.total++
}

// advance drops the parts that left the window by part.
func (r *ring) advance(part int64) {
	if part <= r.last {
		return
	}
	if part-r.last > parts {
		*r = ring{last: part}
		return
	}
	for i := r.last + 1; i <= part; i++ {
		j := i % (parts + 1)
		r.total -= r.counts[j]
		r.counts[j] = 0
	}
	r.last = part
}

// wait returns how long until the oldest counted part leaves the window
// of parts of width nanoseconds; r may be nil (nothing counted).
func (r *ring) wait(width, part, now int64) time.Duration {
	if r == nil {
		return time.Duration(width * (parts + 1))
	}
	for i := part - parts; i <= part; i++ {
		if r.counts[((i%(parts+1))+parts+1)%(parts+1)] > 0 {
			return time.Duration((i+parts+1)*width - now)
		}
	}
	return time.Duration(width)
}

// allow records an event at now in parts of width nanoseconds if fewer
// than limit are counted; otherwise it records nothing and says how long
// until an event leaves the window.
func (r *ring) allow(limit uint32, width, now int64) (bool, time.Duration) {
	part := now / width
	r.advance(part)
	if limit == 0 || r.total >= limit {
		return false, r.wait(width, part, now)
	}
	r.add(part)
	return true, 0
}

// makeRoom frees a place in the full shard s: the keys whose events all
// left the window, or else the sampled key with the oldest newest event.
// A shard is swept at most once a part of the window, so a flood of new
// keys at the bound costs each a sample of 16, not a scan of the shard.
func (w *Windows[K]) makeRoom(s *wshard[K], part int64) {
	if part != s.swept {
		w.sweep(s, part)
		if len(s.m) < w.perShard {
			return
		}
	}
	var victim K
	oldest, fewest, seen := int64(math.MaxInt64), uint32(math.MaxUint32), 0
	for k, r := range s.m { // a map's order is random: a sample
		r.advance(part)
		if w.fewest && (r.total < fewest || r.total == fewest && r.last < oldest) ||
			!w.fewest && r.last < oldest {
			victim, oldest, fewest = k, r.last, r.total
		}
		if seen++; seen == 16 {
			break
		}
	}
	delete(s.m, victim)
	w.keys.Add(-1)
}

// sweep forgets the keys of s whose every event left the window.
func (w *Windows[K]) sweep(s *wshard[K], part int64) {
	for k, r := range s.m {
		if part-r.last > parts {
			delete(s.m, k)
			w.keys.Add(-1)
		}
	}
	s.swept = part
	s.sweeps++
}
