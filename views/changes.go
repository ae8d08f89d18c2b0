package views

import (
	"cmp"
	"sort"
)

// ChangePos is a place in the change feed: after the listing (Store, ID)
// changed at At (unix seconds). The zero ChangePos is before every
// change.
type ChangePos struct {
	At    int64
	Store Store
	ID    string
}

// compare orders places in the feed: by time, then by listing key.
func (p ChangePos) compare(q ChangePos) int {
	if c := cmp.Compare(p.At, q.At); c != 0 {
		return c
	}
	if c := cmp.Compare(p.Store, q.Store); c != 0 {
		return c
	}
	return cmp.Compare(p.ID, q.ID)
}

// posOf returns the place of listing i of the replica.
func (f *Figures) posOf(i int32) ChangePos {
	l := &f.replica.listings[i]
	return ChangePos{At: l.ChangedAt(), Store: l.Store, ID: l.ID}
}

// buildChanges orders every listing by when it last changed (ChangedAt),
// then by key: the change feed. Equal times keep the replica's key order
// (a stable sort of indexes in key order).
func (f *Figures) buildChanges() {
	ls := f.replica.listings
	items := make([]keyed, len(ls))
	for i := range ls {
		items[i] = keyed{key: uint64(max(ls[i].ChangedAt(), 0)), idx: int32(i)}
	}
	radixSort(items)
	f.changes = make([]int32, len(items))
	for i, it := range items {
		f.changes[i] = it.idx
	}
}

// Changes returns up to limit listings that changed after pos, oldest
// change first, and the place of the last one returned (pos itself when
// none is). Each listing appears once, at its latest change: a listing
// that changes again moves to the end of the feed.
func (f *Figures) Changes(pos ChangePos, limit int) ([]*Listing, ChangePos) {
	start := sort.Search(len(f.changes), func(k int) bool { return f.posOf(f.changes[k]).compare(pos) > 0 })
	end := min(start+max(limit, 0), len(f.changes))
	out := make([]*Listing, 0, end-start)
	for _, i := range f.changes[start:end] {
		out = append(out, &f.replica.listings[i])
	}
	if end > start {
		pos = f.posOf(f.changes[end-1])
	}
	return out, pos
}

// ChangeCount returns how many listings changed after pos.
func (f *Figures) ChangeCount(pos ChangePos) int {
	return len(f.changes) - sort.Search(len(f.changes), func(k int) bool { return f.posOf(f.changes[k]).compare(pos) > 0 })
}
