// Package feed orders a replica's listings by when each last changed, so
// that a client can page through what changed since it last asked.
package feed

import (
	"cmp"
	"sort"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/radix"
	"github.com/edge-stats/edge/views/replica"
)

// Pos is a place in the change feed: after the listing (Store, ID)
// changed at At (unix seconds). The zero Pos is before every
// change.
type Pos struct {
	At    int64
	Store views.Store
	ID    string
}

// compare orders places in the feed: by time, then by listing key.
func (p Pos) compare(q Pos) int {
	if c := cmp.Compare(p.At, q.At); c != 0 {
		return c
	}
	if c := cmp.Compare(p.Store, q.Store); c != 0 {
		return c
	}
	return cmp.Compare(p.ID, q.ID)
}

// Feed is every listing of one replica by when it last changed
// (ChangedAt), then by key. It is immutable.
type Feed struct {
	ls      []views.Listing // the replica's listings
	changes []int32         // indexes into ls in feed order
}

// posOf returns the place of listing i of the replica.
func (f *Feed) posOf(i int32) Pos {
	l := &f.ls[i]
	return Pos{At: l.ChangedAt(), Store: l.Store, ID: l.ID}
}

// Build orders every listing of r by when it last changed, then by key.
// Equal times keep the replica's key order (a stable sort of indexes in
// key order).
func Build(r *replica.Replica) *Feed {
	ls := r.All()
	items := make([]radix.Item, len(ls))
	for i := range ls {
		items[i] = radix.Item{Key: uint64(max(ls[i].ChangedAt(), 0)), Index: int32(i)}
	}
	radix.Sort(items)
	f := &Feed{ls: ls, changes: make([]int32, len(items))}
	for i, it := range items {
		f.changes[i] = it.Index
	}
	return f
}

// Page returns up to limit listings that changed after pos, oldest
// change first, and the place of the last one returned (pos itself when
// none is). Each listing appears once, at its latest change: a listing
// that changes again moves to the end of the feed.
func (f *Feed) Page(pos Pos, limit int) ([]*views.Listing, Pos) {
	start := sort.Search(len(f.changes), func(k int) bool { return f.posOf(f.changes[k]).compare(pos) > 0 })
	end := min(start+max(limit, 0), len(f.changes))
	out := make([]*views.Listing, 0, end-start)
	for _, i := range f.changes[start:end] {
		out = append(out, &f.ls[i])
	}
	if end > start {
		pos = f.posOf(f.changes[end-1])
	}
	return out, pos
}

// Count returns how many listings changed after pos.
func (f *Feed) Count(pos Pos) int {
	return len(f.changes) - sort.Search(len(f.changes), func(k int) bool { return f.posOf(f.changes[k]).compare(pos) > 0 })
}
