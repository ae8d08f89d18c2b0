// Package replica holds the listings the edge serves, sorted by store and
// id, with their series and text packed into few allocations; a reload
// builds a new replica beside the old one, sharing what did not change.
package replica

import (
	"cmp"
	"fmt"
	"slices"
	"time"
	"unsafe"
	"weak"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/textindex"
)

// Replica is an immutable copy of every listing's current state, sorted by
// store and id. It is never modified after New returns.
type Replica struct {
	listings   []views.Listing
	storeStart [views.NumStores + 1]int // listings of store s are listings[storeStart[s]:storeStart[s+1]]
	info       Info
	text       textindex.Index // names, descriptions and developers for search
	strs       pack            // the listings' own strings (see ownStrings)
	sparks     pack            // the listings' sparklines
	changes    *changes.Log    // the listings' metadata changes; nil when not loaded
	applied    []applied       // how a delta, or a chain of them, made it from its bases (AppliedTo); nil otherwise
	digests    *digestCache    // its listings' groups for DigestOf, once computed
}

// Info describes where a replica came from.
type Info struct {
	Generation   uint64        // increases with every published replica
	LoadedAt     time.Time     // when loading finished
	LoadTime     time.Duration // how long loading took
	ListingsMark time.Time     // newest metadata crawl read (the incremental watermark)
	ReadingsMark time.Time     // newest reading read: the data's "now" for every figure
	ClimbAt      time.Time     // reference time of the 7-day rank climb: the end of the UTC day 7 days before ReadingsMark's
	ChartTo      time.Time     // end of the trending and rising charts' window: the start of ReadingsMark's UTC day minus views.ChartLag
	HasHistory   bool          // growth, climb and sparkline figures are loaded
}

// NewInfo returns the info of a replica whose newest reading is at
// readings. Its climb reference time and its charts' window follow from
// the UTC day of that reading, not its instant: every listing's chart
// sizes and climb base are read at them, so a full reload of the same
// day, whose newest reading has moved on since the last, gives every
// listing it did not see change the very figures it had, and a fleet's
// leader sends its followers only what changed (docs/figures.md, Charts).
// They move once a day, at the first full load of the data's new day;
// an incremental refresh keeps them until then.
func NewInfo(listings, readings time.Time) Info {
	day := views.DayOf(readings).Time()
	return Info{ListingsMark: listings, ReadingsMark: readings,
		ClimbAt: day.Add(-6*24*time.Hour - time.Second), ChartTo: day.Add(-views.ChartLag)}
}

// ChartWindow returns the two instants (unix seconds) the trending and
// rising charts rank every listing's growth between: views.ChartDays
// before ChartTo, and ChartTo.
func (i Info) ChartWindow() (from, to int64) {
	to = i.ChartTo.Unix()
	return to - views.ChartDays*86400, to
}

// New takes ownership of listings, sorts them by store and id, and
// keeps the last one of any duplicate (store, id).
func New(listings []views.Listing, info Info) *Replica {
	return newSorted(sortDedup(listings), info)
}

// sortDedup sorts by key, keeping the last of equal keys (loaders hand rows
// in arrival order). Listings are large, so it sorts a permutation of
// indexes and then moves each listing once, in place.
func sortDedup(listings []views.Listing) []views.Listing {
	n := len(listings)
	perm := make([]int32, n)
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int { return compareKey(&listings[a], &listings[b]) })
	// Apply the permutation in place by following its cycles.
	for i := range n {
		if int(perm[i]) == i {
			continue
		}
		tmp := listings[i]
		j := i
		for {
			k := int(perm[j])
			perm[j] = int32(j)
			if k == i {
				listings[j] = tmp
				break
			}
			listings[j] = listings[k]
			j = k
		}
	}
	out := listings[:0]
	for i := range listings {
		if i+1 < n && compareKey(&listings[i], &listings[i+1]) == 0 {
			continue
		}
		out = append(out, listings[i])
	}
	clear(listings[len(out):])
	return slices.Clip(out)
}

func newSorted(listings []views.Listing, info Info) *Replica {
	return newSortedFrom(listings, info, nil)
}

// newSortedFrom is newSorted sharing prev's name and description text
// when listings hold exactly prev's names and descriptions, in order, and
// the chunks of prev's packs that the listings still mostly use.
func newSortedFrom(listings []views.Listing, info Info, prev *Replica) *Replica {
	var (
		prevText            *textindex.Index
		prevStrs, prevSpark *pack
	)
	if prev != nil {
		prevText, prevStrs, prevSpark = &prev.text, &prev.strs, &prev.sparks
	}
	r := &Replica{listings: listings, info: info, text: textindex.Build(listings, prevText), digests: new(digestCache)}
	if prev != nil {
		r.changes = prev.changes // until the loader sets the new replica's (WithChanges)
	}
	r.strs, r.sparks = packListings(listings, prevStrs, prevSpark)
	for s := range views.NumStores + 1 {
		r.storeStart[s], _ = slices.BinarySearchFunc(r.listings, views.Store(s), func(l views.Listing, st views.Store) int {
			return cmp.Compare(l.Store, st)
		})
	}
	return r
}

func compareKey(a, b *views.Listing) int {
	if c := cmp.Compare(a.Store, b.Store); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// Info returns the replica's generation and load figures.
func (r *Replica) Info() Info { return r.info }

// Len returns the number of listings in the replica, live or not.
func (r *Replica) Len() int { return len(r.listings) }

// All returns every listing, sorted by store and id. The slice is shared:
// callers must not modify it.
func (r *Replica) All() []views.Listing { return r.listings }

// OfStore returns the listings of one store, sorted by id. The slice is
// shared: callers must not modify it.
func (r *Replica) OfStore(s views.Store) []views.Listing {
	if !s.Valid() {
		return nil
	}
	return r.listings[r.storeStart[s]:r.storeStart[s+1]]
}

// Lookup returns the listing with the given store and id, or nil.
func (r *Replica) Lookup(s views.Store, id string) *views.Listing {
	i := r.indexOf(s, id)
	if i < 0 {
		return nil
	}
	return &r.listings[i]
}

// indexOf returns the index of the listing with the given key, or -1.
func (r *Replica) indexOf(s views.Store, id string) int {
	if !s.Valid() {
		return -1
	}
	lo := r.storeStart[s]
	i, ok := slices.BinarySearchFunc(r.listings[lo:r.storeStart[s+1]], id, func(l views.Listing, id string) int { return cmp.Compare(l.ID, id) })
	if !ok {
		return -1
	}
	return lo + i
}

// Counts returns the number of listings per store, live or not.
func (r *Replica) Counts() [views.NumStores]int {
	var c [views.NumStores]int
	for s := range views.NumStores {
		c[s] = r.storeStart[s+1] - r.storeStart[s]
	}
	return c
}

// Builder collects listings for a new replica. Loaders add listings,
// then find them by key to fill in their history; Build hands the result
// over as an immutable Replica. It is not safe for concurrent use.
type Builder struct {
	listings []views.Listing
	sorted   bool
	from     *Replica // the replica BuilderFrom copied, whose text the new one may share
}

// NewBuilder returns a builder with room for n listings.
func NewBuilder(n int) *Builder {
	return &Builder{listings: make([]views.Listing, 0, n)}
}

// Add appends a copy of l; a later listing with the same key replaces an
// earlier one.
func (b *Builder) Add(l *views.Listing) {
	b.listings = append(b.listings, *l)
	b.sorted = false
}

// NewestReading returns the newest reading (unix seconds) of the
// listings added, 0 when none was read.
func (b *Builder) NewestReading() int64 {
	var newest int64
	for i := range b.listings {
		newest = max(newest, b.listings[i].ReadAt)
	}
	return newest
}

// Len returns the number of listings added, counting duplicates until the
// first Find.
func (b *Builder) Len() int { return len(b.listings) }

// Find returns the listing with the given key, for filling in, or nil.
func (b *Builder) Find(s views.Store, id string) *views.Listing {
	if !b.sorted {
		b.listings = sortDedup(b.listings)
		b.sorted = true
	}
	i, ok := slices.BinarySearchFunc(b.listings, key{s, id}, compareToKey)
	if !ok {
		return nil
	}
	return &b.listings[i]
}

// AddPart moves the listings of part (a builder of one key range, read
// after every range before it) to the end of b and empties part, which
// keeps its room for the next part. b stays
// sorted, so finding a listing in it needs no sort, when the parts arrive
// in key order and b held only earlier parts; AddPart refuses a part that
// starts before b's last key.
func (b *Builder) AddPart(part *Builder) error {
	ls := part.listings
	if !part.sorted {
		ls = sortDedup(ls)
	}
	defer func() {
		clear(ls) // drop its strings: they live on in b
		part.listings, part.sorted = ls[:0], false
	}()
	if len(ls) == 0 {
		return nil
	}
	if len(b.listings) == 0 {
		b.sorted = true
	}
	if n := len(b.listings); n > 0 && compareKey(&b.listings[n-1], &ls[0]) >= 0 {
		return fmt.Errorf("part starting at %s/%s is not after %s/%s", ls[0].Store, ls[0].ID, b.listings[n-1].Store, b.listings[n-1].ID)
	}
	b.listings = append(b.listings, ls...)
	return nil
}

// Range returns a builder over the listings of store s whose id is in
// [from, to) (to "": to the store's end), sharing b's memory: filling in
// listings through it fills them in b. Ranges that do not overlap can be
// filled at once by different goroutines. b must not be added to while a
// range is in use.
func (b *Builder) Range(s views.Store, from, to string) *Builder {
	if !b.sorted {
		b.listings = sortDedup(b.listings)
		b.sorted = true
	}
	at := func(id string, end bool) int {
		if end && id == "" {
			i, _ := slices.BinarySearchFunc(b.listings, s+1, func(l views.Listing, st views.Store) int { return cmp.Compare(l.Store, st) })
			return i
		}
		i, _ := slices.BinarySearchFunc(b.listings, key{s, id}, compareToKey)
		return i
	}
	lo, hi := at(from, false), at(to, true)
	return &Builder{listings: b.listings[lo:hi:hi], sorted: true}
}

// Build returns the replica; the builder must not be used afterwards.
func (b *Builder) Build(info Info) *Replica {
	ls := b.listings
	if !b.sorted {
		ls = sortDedup(ls)
	}
	b.listings = nil
	return newSortedFrom(ls, info, b.from)
}

type key struct {
	store views.Store
	id    string
}

func compareToKey(l views.Listing, k key) int {
	if c := cmp.Compare(l.Store, k.store); c != 0 {
		return c
	}
	return cmp.Compare(l.ID, k.id)
}

// Merge returns a new replica holding old's listings with the builder's
// listings added or put in place of old ones with the same key. old is not
// changed. The cost is one copy of old's listings plus the changed ones.
func Merge(old *Replica, changed *Builder, info Info) *Replica {
	ch := changed.listings
	if !changed.sorted {
		ch = sortDedup(ch)
	}
	changed.listings = nil
	out := make([]views.Listing, 0, len(old.listings)+len(ch))
	var a Applied
	i, j := 0, 0
	for i < len(old.listings) || j < len(ch) {
		switch {
		case j == len(ch):
			out = append(out, old.listings[i:]...)
			i = len(old.listings)
		case i == len(old.listings):
			for ; j < len(ch); j++ {
				a.Added = append(a.Added, int32(len(out)))
				out = append(out, ch[j])
			}
		default:
			switch c := compareKey(&old.listings[i], &ch[j]); {
			case c < 0:
				out = append(out, old.listings[i])
				i++
			case c > 0:
				a.Added = append(a.Added, int32(len(out)))
				out = append(out, ch[j])
				j++
			default:
				a.Dropped = append(a.Dropped, int32(i))
				a.Added = append(a.Added, int32(len(out)))
				out = append(out, ch[j])
				i++
				j++
			}
		}
	}
	r := newSortedFrom(out, info, old)
	// How it was made from old, for its digest (DigestOf hashes again
	// only the groups the merge touched); not composed with old's own
	// bases, which no build of a merged replica starts from.
	r.applied = []applied{{base: weak.Make(old), Applied: a}}
	return r
}

// BuilderFrom returns a builder holding a copy of r's listings, to which a
// loader can add history before building a new replica. r is not changed.
func BuilderFrom(r *Replica) *Builder {
	return &Builder{listings: slices.Clone(r.listings), sorted: true, from: r}
}

// ShareText makes the replica b builds share r's name and description
// text, and so their trigram indexes, where its listings hold exactly r's
// strings, in order (a reload that took its unchanged strings from r).
func (b *Builder) ShareText(r *Replica) { b.from = r }

// SharesText reports whether r and o share their names' and descriptions'
// text (and trigram indexes).
func (r *Replica) SharesText(o *Replica) bool {
	return r.text.SharesNames(&o.text) && r.text.SharesDescriptions(&o.text)
}

// WithInfo returns a replica sharing r's listings with other info, such as
// older watermarks (for benchmarks and tools).
func (r *Replica) WithInfo(info Info) *Replica {
	c := *r
	c.info = info
	return &c
}

// WithChanges returns a replica sharing r's listings with log as its
// listings' changes.
func (r *Replica) WithChanges(log *changes.Log) *Replica {
	c := *r
	c.changes = log
	return &c
}

// Changes returns the log of r's listings' metadata changes, nil when
// none was loaded.
func (r *Replica) Changes() *changes.Log { return r.changes }

// IndexText builds the trigram indexes of r's names, developers and
// searched descriptions (chrome, edge and firefox) if they are not built
// yet (replicas that share an arena share its index). Until it returns, a
// search scans the text instead: the index makes searches faster, never
// different. It is safe to call while r is read, and more than once.
func (r *Replica) IndexText() { r.text.BuildGrams() }

// TextIndexBytes returns the bytes of r's trigram indexes, 0 while they
// are not built.
func (r *Replica) TextIndexBytes() int { return r.text.GramBytes() }

// Text returns r's text index, for searches (package listq).
func (r *Replica) Text() *textindex.Index { return &r.text }

// StoreRange returns the indexes [lo, hi) of store s's listings.
func (r *Replica) StoreRange(s views.Store) (lo, hi int) {
	return r.storeStart[s], r.storeStart[s+1]
}

// At returns the replica's listing i.
func (r *Replica) At(i int32) *views.Listing { return &r.listings[i] }

// Index returns the index of the listing with l's key, or -1.
func (r *Replica) Index(l *views.Listing) int32 {
	// A listing of the replica is found by its address; any other (a copy)
	// by its store and id.
	if ls := r.listings; len(ls) > 0 {
		base, at, size := uintptr(unsafe.Pointer(&ls[0])), uintptr(unsafe.Pointer(l)), unsafe.Sizeof(ls[0])
		if at >= base && at < base+uintptr(len(ls))*size && (at-base)%size == 0 {
			return int32((at - base) / size)
		}
	}
	return int32(r.indexOf(l.Store, l.ID))
}
