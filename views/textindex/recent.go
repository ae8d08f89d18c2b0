package textindex

import (
	"container/list"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Recent remembers the matches of recent searches of one Index, so that
// the queries a dashboard or an analyst sends around one text (other
// sorts, filters and pages of the same search box) verify its candidates
// once. A common word is the dearest query there is: "dark" is in the
// text of a hundred thousand listings at 1M, and a search verifies each
// one; a remembered search is a copy of its bitmap.
//
// Only complete searches are remembered (not those cut by a deadline).
// Entries hold the bitmap's words over the searched range alone and are
// let go least recently used first once they pass the byte bound. A
// Recent belongs to one Index, whose text never changes: nothing in it
// goes stale. It is safe for concurrent use.
type Recent struct {
	max int // bytes

	mu      sync.Mutex
	used    int
	entries map[recentKey]*list.Element
	order   list.List // of *recentEntry, most recently used first

	hits, misses atomic.Int64
}

type recentKey struct {
	q        string
	withDesc bool
	lo, hi   int
}

type recentEntry struct {
	key   recentKey
	words []uint64 // the bitmap's words from lo>>6
}

// NewRecent returns a Recent that holds at most maxBytes of matches.
func NewRecent(maxBytes int) *Recent {
	return &Recent{max: maxBytes, entries: map[recentKey]*list.Element{}}
}

// Search is t.Search(q, withDesc, lo, hi, deadline), answered from
// memory when the same search ran complete before. Its bitmap holds only
// listings in [lo, hi) (a developer's listings outside it are not set)
// and is the caller's, to hand back with PutBitmap.
func (r *Recent) Search(t *Index, q string, withDesc bool, lo, hi int, deadline time.Time) (out []uint64, partial bool) {
	if !t.ok {
		return nil, false
	}
	lo, hi = max(lo, 0), min(hi, t.listingLen)
	if lo >= hi {
		return GetBitmap((t.listingLen + 63) / 64), false
	}
	k := recentKey{q, withDesc, lo, hi}
	r.mu.Lock()
	if e, ok := r.entries[k]; ok {
		r.order.MoveToFront(e)
		words := e.Value.(*recentEntry).words
		r.mu.Unlock()
		r.hits.Add(1)
		out = GetBitmap((t.listingLen + 63) / 64)
		copy(out[lo>>6:], words)
		return out, false
	}
	r.mu.Unlock()
	r.misses.Add(1)
	out, partial = t.Search(q, withDesc, lo, hi, deadline)
	clipBitmap(out, lo, hi)
	if !partial {
		r.add(k, out[lo>>6:(hi+63)>>6])
	}
	return out, partial
}

// clipBitmap clears the bits of b outside [lo, hi).
func clipBitmap(b []uint64, lo, hi int) {
	first, last := lo>>6, (hi-1)>>6
	clear(b[:first])
	clear(b[min(last+1, len(b)):])
	b[first] &= ^uint64(0) << (lo & 63)
	if r := hi & 63; r != 0 {
		b[last] &= 1<<r - 1
	}
}

// add remembers words as the matches of k, letting go of the least
// recently used entries past the bound.
func (r *Recent) add(k recentKey, words []uint64) {
	size := 8*len(words) + len(k.q) + 96
	if size > r.max/4 {
		return // one search may not take the room of many
	}
	// The caller's q may borrow a request's bytes (parsers read queries
	// without copying): the key keeps a copy.
	k.q = strings.Clone(k.q)
	e := &recentEntry{key: k, words: append([]uint64(nil), words...)}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[k]; ok {
		return // another caller ran the same search at the same time
	}
	r.entries[k] = r.order.PushFront(e)
	r.used += size
	for r.used > r.max {
		old := r.order.Back()
		oe := old.Value.(*recentEntry)
		r.order.Remove(old)
		delete(r.entries, oe.key)
		r.used -= 8*len(oe.words) + len(oe.key.q) + 96
	}
}

// RecentStats is what a Recent holds and how often it answered.
type RecentStats struct {
	Entries, Bytes int
	Hits, Misses   int64
}

// Stats returns r's entries, bytes and searches answered from memory
// (hits) or run (misses).
func (r *Recent) Stats() RecentStats {
	r.mu.Lock()
	defer r.mu.Unlock()
	return RecentStats{Entries: len(r.entries), Bytes: r.used, Hits: r.hits.Load(), Misses: r.misses.Load()}
}
