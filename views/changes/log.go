package changes

import (
	"cmp"
	"slices"
	"sort"
	"unsafe"

	"github.com/edge-stats/edge/views"
)

// Pos is a place in the feed: the change (At, Store, ID, Kind), or between
// changes. Positions are data, not indexes, so a cursor made on one Log
// means the same place on the next.
type Pos struct {
	At    int64
	Store views.Store
	ID    string
	Kind  Kind
}

// PosOf returns the place of c.
func PosOf(c *Change) Pos { return Pos{At: c.At, Store: c.Store, ID: c.ID, Kind: c.Kind} }

// Compare orders places as the feed does: by time, store, id, then kind.
func (p Pos) Compare(q Pos) int {
	if c := cmp.Compare(p.At, q.At); c != 0 {
		return c
	}
	if c := cmp.Compare(p.Store, q.Store); c != 0 {
		return c
	}
	if c := cmp.Compare(p.ID, q.ID); c != 0 {
		return c
	}
	return cmp.Compare(p.Kind, q.Kind)
}

// Log is every change of a retention window, immutable once made: in feed
// order (At, Store, ID, Kind ascending), indexed by listing and by store
// and kind.
type Log struct {
	all       []Change
	byListing []int32                            // positions, by Store, ID, At, Kind
	byKind    [views.NumStores][numKinds][]int32 // positions of each store's changes of each kind, in feed order
	byAdded   map[string][]int32                 // positions of the permissions changes that added each permission, in feed order
	from      int64
	derived   int // the takeovers among all
}

// NewLog returns the log of cs (which it takes and sorts) that happened
// at or after from (unix seconds), with the takeovers they hold (any in
// cs are dropped and derived again); an exact repeat of a change (the
// same place) is kept once.
func NewLog(cs []Change, from int64) *Log {
	cs = slices.DeleteFunc(cs, func(c Change) bool {
		return c.At < from || !c.Store.Valid() || c.Kind == 0 || c.Kind >= numKinds || c.Kind == Takeover
	})
	slices.SortStableFunc(cs, func(a, b Change) int { return PosOf(&a).Compare(PosOf(&b)) })
	cs = slices.CompactFunc(cs, func(a, b Change) bool { return PosOf(&a) == PosOf(&b) })
	derived := takeovers(cs)
	cs = mergeSorted(cs, derived)
	l := &Log{all: slices.Clip(cs), from: from, derived: len(derived), byListing: make([]int32, len(cs)), byAdded: map[string][]int32{}}
	for i := range cs {
		l.byListing[i] = int32(i)
		c := &cs[i]
		l.byKind[c.Store][c.Kind] = append(l.byKind[c.Store][c.Kind], int32(i))
		if c.Kind == Permissions {
			for _, p := range c.Added() {
				if list := l.byAdded[p]; len(list) == 0 || list[len(list)-1] != int32(i) { // a name once a change
					l.byAdded[p] = append(list, int32(i))
				}
			}
		}
	}
	slices.SortFunc(l.byListing, func(a, b int32) int {
		x, y := &l.all[a], &l.all[b]
		if c := cmp.Compare(x.Store, y.Store); c != 0 {
			return c
		}
		if c := cmp.Compare(x.ID, y.ID); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return l
}

// With returns a new log: l's changes at or after from, and more (the
// changes a refresh read). l is unchanged.
func (l *Log) With(more []Change, from int64) *Log {
	if l == nil {
		return NewLog(more, from)
	}
	if len(more) == 0 && from <= l.from {
		return l
	}
	return NewLog(append(slices.Clone(l.all), more...), max(from, l.from))
}

// Len returns the number of changes in l.
func (l *Log) Len() int {
	if l == nil {
		return 0
	}
	return len(l.all)
}

// From returns the start of l's window (unix seconds).
func (l *Log) From() int64 {
	if l == nil {
		return 0
	}
	return l.from
}

// At returns the change at position i.
func (l *Log) At(i int) *Change { return &l.all[i] }

// Newest returns the place of the newest change, or the zero Pos.
func (l *Log) Newest() Pos {
	if l.Len() == 0 {
		return Pos{}
	}
	return PosOf(&l.all[len(l.all)-1])
}

// Listing returns the changes of listing (s, id) strictly before before
// (the zero Pos: from the newest), newest first, at most limit of them,
// and whether older ones remain.
func (l *Log) Listing(s views.Store, id string, before Pos, limit int) (out []*Change, more bool) {
	if l.Len() == 0 {
		return nil, false
	}
	lo := sort.Search(len(l.byListing), func(k int) bool {
		c := &l.all[l.byListing[k]]
		return c.Store > s || (c.Store == s && c.ID >= id)
	})
	hi := lo
	for hi < len(l.byListing) && l.all[l.byListing[hi]].Store == s && l.all[l.byListing[hi]].ID == id {
		hi++
	}
	for k := hi - 1; k >= lo; k-- {
		c := &l.all[l.byListing[k]]
		if before != (Pos{}) && PosOf(c).Compare(before) >= 0 {
			continue
		}
		if len(out) == limit {
			return out, true
		}
		out = append(out, c)
	}
	return out, false
}

// Filter selects changes of the feed. Its zero value selects every one.
type Filter struct {
	Stores     []views.Store // none: every store
	Kinds      []Kind        // none: every kind
	Permission string        // "": any; else only Permissions changes that added it
}

// lists returns the index lists f reads, and whether each change they
// hold must still be checked against f (Keeps): a permission's list holds
// every store's changes that added it.
func (l *Log) lists(f *Filter) (lists [][]int32, check bool) {
	if f.Permission != "" {
		if list := l.byAdded[f.Permission]; len(list) > 0 {
			return [][]int32{list}, true
		}
		return nil, false
	}
	stores, kinds := f.Stores, f.Kinds
	if len(stores) == 0 {
		for s := range views.Store(views.NumStores) {
			stores = append(stores, s)
		}
	}
	if len(kinds) == 0 {
		kinds = Kinds()
	}
	stores, kinds = slices.Compact(slices.Sorted(slices.Values(stores))), slices.Compact(slices.Sorted(slices.Values(kinds)))
	for _, s := range stores {
		for _, k := range kinds {
			if s.Valid() && k > 0 && k < numKinds && len(l.byKind[s][k]) > 0 {
				lists = append(lists, l.byKind[s][k])
			}
		}
	}
	return lists, false
}

// Keeps reports whether f selects c.
func (f *Filter) Keeps(c *Change) bool {
	if len(f.Stores) > 0 && !slices.Contains(f.Stores, c.Store) {
		return false
	}
	if f.Permission != "" {
		return c.Kind == Permissions && slices.Contains(c.Added(), f.Permission)
	}
	return len(f.Kinds) == 0 || slices.Contains(f.Kinds, c.Kind)
}

// After returns the changes f selects strictly after pos, oldest first,
// at most limit, and whether more remain.
func (l *Log) After(f *Filter, pos Pos, limit int) (out []*Change, more bool) {
	if l.Len() == 0 {
		return nil, false
	}
	start := sort.Search(len(l.all), func(i int) bool { return PosOf(&l.all[i]).Compare(pos) > 0 })
	lists, check := l.lists(f)
	heads := make([]int, len(lists))
	for i, list := range lists {
		heads[i] = sort.Search(len(list), func(k int) bool { return int(list[k]) >= start })
	}
	for {
		best := -1
		for i, list := range lists {
			if heads[i] < len(list) && (best < 0 || list[heads[i]] < lists[best][heads[best]]) {
				best = i
			}
		}
		if best < 0 {
			return out, false
		}
		c := &l.all[lists[best][heads[best]]]
		heads[best]++
		if check && !f.Keeps(c) {
			continue
		}
		if len(out) == limit {
			return out, true
		}
		out = append(out, c)
	}
}

// Before returns the changes f selects strictly before pos (the zero Pos:
// from the newest), newest first, at most limit, and whether more remain.
func (l *Log) Before(f *Filter, pos Pos, limit int) (out []*Change, more bool) {
	if l.Len() == 0 {
		return nil, false
	}
	end := len(l.all)
	if pos != (Pos{}) {
		end = sort.Search(len(l.all), func(i int) bool { return PosOf(&l.all[i]).Compare(pos) >= 0 })
	}
	lists, check := l.lists(f)
	heads := make([]int, len(lists)) // one past the next to take
	for i, list := range lists {
		heads[i] = sort.Search(len(list), func(k int) bool { return int(list[k]) >= end })
	}
	for {
		best := -1
		for i, list := range lists {
			if heads[i] > 0 && (best < 0 || list[heads[i]-1] > lists[best][heads[best]-1]) {
				best = i
			}
		}
		if best < 0 {
			return out, false
		}
		heads[best]--
		c := &l.all[lists[best][heads[best]]]
		if check && !f.Keeps(c) {
			continue
		}
		if len(out) == limit {
			return out, true
		}
		out = append(out, c)
	}
}

// Bytes returns about the memory l holds beside the strings it shares
// with the listings.
func (l *Log) Bytes() int {
	if l == nil {
		return 0
	}
	n := len(l.all)*int(unsafe.Sizeof(Change{})) + 8*len(l.byListing) // byListing and byKind
	for i := range l.all {
		n += 16 * len(l.all[i].Set)
	}
	return n
}

// Tail returns the log of l's changes strictly after p (the zero Pos:
// all of them), with l's window start: what a log that ends at p lacks
// of l. l is unchanged.
func (l *Log) Tail(p Pos) *Log {
	if l == nil {
		return NewLog(nil, 0)
	}
	i, _ := slices.BinarySearchFunc(l.all, p, func(c Change, p Pos) int {
		if PosOf(&c).Compare(p) <= 0 {
			return -1
		}
		return 1
	})
	return NewLog(slices.Clone(l.all[i:]), l.from)
}

// Extend returns l's changes with tail's appended, in tail's window: the
// log a refresh that read tail's changes builds (With). l is unchanged.
func (l *Log) Extend(tail *Log) *Log {
	if tail == nil {
		return l
	}
	return l.With(tail.all, tail.from)
}

// Equal reports whether l and o hold the same changes in the same window.
func (l *Log) Equal(o *Log) bool {
	if l.Len() != o.Len() || l.From() != o.From() {
		return false
	}
	for i := range l.Len() {
		a, b := &l.all[i], &o.all[i]
		if a.At != b.At || a.ID != b.ID || a.Store != b.Store || a.Kind != b.Kind || a.Widened != b.Widened || a.Via != b.Via ||
			a.nAdded != b.nAdded || a.Before != b.Before || a.After != b.After || !slices.Equal(a.Set, b.Set) {
			return false
		}
	}
	return true
}
