// Package textindex finds the listings whose name, developer or
// description contains a text, in arenas of the replica's own strings
// with trigram indexes built beside them.
package textindex

import (
	"bytes"
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/edge-stats/edge/views"
)

// Index makes text search a scan of contiguous memory. A replica keeps
// every name and description once, in two arenas, and its listings' Name
// and Description strings point into them (so the index costs no second
// copy of the text); developers, which listings share, are kept once each
// in a third arena of distinct values, with each listing's number in it.
//
// A search scans an arena for a pair of the query's bytes at their
// distance, 32 positions at a time with AVX2 where the build has it
// (textscan_simd.go) and 8 at a time otherwise (textscan_nosimd.go), and
// verifies each candidate.
type Index struct {
	names, descs, devs textArena
	devListings        []uint32 // listings by developer: those of developer d are devListings[devStart[d]:devStart[d+1]]
	devStart           []uint32
	descFrom, descTo   int  // listings whose description is searched: chrome, edge, firefox
	ok                 bool // false when the text did not fit (see Build)
	listingLen         int
}

// textArena holds segments of text back to back: segment i is
// data[end[i-1]:end[i]] (from 0 for the first).
type textArena struct {
	data []byte
	end  []uint32
	slot *gramSlot // its trigram index, once built (see IndexText)
}

// holds reports whether segment i of a is, for every i, field of
// listings[i] itself (the same bytes at the same address), so that a can
// be shared as their arena.
func (a *textArena) holds(listings []views.Listing, field func(*views.Listing) string) bool {
	if len(a.end) != len(listings) {
		return false
	}
	for i := range listings {
		s, seg := field(&listings[i]), a.seg(i)
		if len(s) != len(seg) || (len(s) > 0 && unsafe.StringData(s) != unsafe.StringData(seg)) {
			return false
		}
	}
	return true
}

func (a *textArena) seg(i int) string {
	from := uint32(0)
	if i > 0 {
		from = a.end[i-1]
	}
	if a.end[i] == from {
		return ""
	}
	return unsafe.String(&a.data[from], int(a.end[i]-from))
}

// Build builds the text index of listings and points their Name and
// Description into it. It runs before the replica is published, while
// nothing else reads listings. When the text exceeds what 32-bit offsets
// address (4 GiB), it keeps the strings where they are and search falls
// back to testing each listing.
//
// When prev (the text of the replica the listings were copied from) holds
// exactly their names, or descriptions, in order, its arena is shared
// instead of copied: a replica built from another with history added
// costs no second copy of its text.
func Build(listings []views.Listing, prev *Index) Index {
	var names, descs int
	for i := range listings {
		names += len(listings[i].Name)
		descs += len(listings[i].Description)
	}
	if uint64(names) > math.MaxUint32 || uint64(descs) > math.MaxUint32 {
		return Index{}
	}
	t := Index{ok: true, listingLen: len(listings)}
	var shareNames, shareDescs bool
	if prev != nil && prev.ok && prev.listingLen == len(listings) {
		shareNames = prev.names.holds(listings, func(l *views.Listing) string { return l.Name })
		shareDescs = prev.descs.holds(listings, func(l *views.Listing) string { return l.Description })
	}
	if shareNames {
		t.names = prev.names
	} else {
		t.names = textArena{data: make([]byte, 0, names), end: make([]uint32, len(listings)), slot: new(gramSlot)}
	}
	if shareDescs {
		t.descs = prev.descs
	} else {
		t.descs = textArena{data: make([]byte, 0, descs), end: make([]uint32, len(listings)), slot: new(gramSlot)}
	}
	// Names and descriptions are copied (and the listings pointed at the
	// copies) while developers are numbered: the two touch different
	// fields of the listings.
	var wg sync.WaitGroup
	fill := func(a *textArena, field func(*views.Listing) *string) {
		for i := range listings {
			a.data = append(a.data, *field(&listings[i])...)
			a.end[i] = uint32(len(a.data))
		}
		for i := range listings {
			*field(&listings[i]) = a.seg(i)
		}
	}
	if !shareNames {
		wg.Go(func() { fill(&t.names, func(l *views.Listing) *string { return &l.Name }) })
	}
	if !shareDescs {
		wg.Go(func() { fill(&t.descs, func(l *views.Listing) *string { return &l.Description }) })
	}
	devOf := make([]uint32, len(listings))
	devID := make(map[string]uint32)
	for i := range listings {
		l := &listings[i]
		id, ok := devID[l.Developer]
		if !ok {
			id = uint32(len(t.devs.end))
			devID[l.Developer] = id
			t.devs.data = append(t.devs.data, l.Developer...)
			t.devs.end = append(t.devs.end, uint32(len(t.devs.data)))
		}
		devOf[i] = id
	}
	// The same developers in the same order as prev's: share its arena,
	// and so its trigram index.
	if prev != nil && prev.ok && bytes.Equal(prev.devs.data, t.devs.data) && slices.Equal(prev.devs.end, t.devs.end) {
		t.devs = prev.devs
	} else {
		t.devs.data, t.devs.end = slices.Clip(t.devs.data), slices.Clip(t.devs.end)
		t.devs.slot = new(gramSlot)
	}
	// Each listing's developer points into the arena: one copy of each
	// name, in one object (see pack for why few objects matter).
	for i := range listings {
		listings[i].Developer = t.devs.seg(int(devOf[i]))
	}
	// Postings by developer (a counting sort of listings by developer).
	t.devStart = make([]uint32, len(t.devs.end)+1)
	for _, d := range devOf {
		t.devStart[d+1]++
	}
	for d := range t.devs.end {
		t.devStart[d+1] += t.devStart[d]
	}
	t.devListings = make([]uint32, len(listings))
	next := slices.Clone(t.devStart[:len(t.devs.end)])
	for i, d := range devOf {
		t.devListings[next[d]] = uint32(i)
		next[d]++
	}
	wg.Wait()
	t.descFrom, t.descTo = len(listings), len(listings)
	for i := range listings {
		if descSearched(listings[i].Store) {
			t.descFrom = i
			break
		}
	}
	for i := t.descFrom; i < len(listings); i++ {
		if !descSearched(listings[i].Store) {
			t.descTo = i
			break
		}
	}
	return t
}

// descSearched reports whether a store's descriptions are searched: the
// stores whose descriptions are the listing's own words (not apple or
// googleplay, whose long marketing copy would match almost anything).
func descSearched(s views.Store) bool {
	return s == views.Chrome || s == views.Edge || s == views.Firefox
}

// bitmaps recycles the per-query bitmaps of searches (a bit per listing,
// 125 KB at 1M listings), so that queries do not drive the collector.
var bitmaps sync.Pool

// GetBitmap returns a cleared bitmap of n words.
func GetBitmap(n int) []uint64 {
	if p, ok := bitmaps.Get().(*[]uint64); ok && cap(*p) >= n {
		b := (*p)[:n]
		clear(b)
		return b
	}
	return make([]uint64, n)
}

// PutBitmap hands b back for reuse; b must not be used after.
func PutBitmap(b []uint64) {
	if b != nil {
		bitmaps.Put(&b)
	}
}

// BuildGrams builds the trigram indexes of the names, developers and
// searched descriptions if they are not built yet (indexes that share an
// arena share its trigram index). Until it returns, a search scans the
// text instead: the index makes searches faster, never different. It is
// safe to call while t is searched, and more than once.
func (t *Index) BuildGrams() {
	if !t.ok {
		return
	}
	t.names.indexGrams(0, len(t.names.end))
	t.devs.indexGrams(0, len(t.devs.end))
	t.descs.indexGrams(t.descFrom, t.descTo)
}

// GramBytes returns the bytes of t's trigram indexes, 0 while they are
// not built.
func (t *Index) GramBytes() int {
	n := 0
	for _, a := range []*textArena{&t.names, &t.devs, &t.descs} {
		if g := a.grams(); g != nil {
			n += g.size()
		}
	}
	return n
}

// SharesNames reports whether t and o hold the same names' arena (and so
// its trigram index): one was built from the other's listings with their
// names unchanged.
func (t *Index) SharesNames(o *Index) bool {
	return t.ok && o.ok && t.names.slot == o.names.slot
}

// SharesDescriptions is SharesNames for the descriptions.
func (t *Index) SharesDescriptions(o *Index) bool {
	return t.ok && o.ok && t.descs.slot == o.descs.slot
}

// NamesIndexed reports whether the names' trigram index is built.
func (t *Index) NamesIndexed() bool { return t.names.grams() != nil }

// Holds reports whether s's bytes lie in one of t's arenas: a listing's
// name, description or developer that points into the index.
func (t *Index) Holds(s string) bool {
	if len(s) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	for _, a := range []*textArena{&t.names, &t.descs, &t.devs} {
		if len(a.data) > 0 {
			lo := uintptr(unsafe.Pointer(&a.data[0]))
			if p >= lo && p+uintptr(len(s)) <= lo+uintptr(len(a.data)) {
				return true
			}
		}
	}
	return false
}
