package replica

import (
	"slices"
	"unsafe"

	"github.com/edge-stats/edge/views"
)

// A pack keeps bytes that belong to one listing each (ids, slugs, icons,
// versions; sparklines) back to back in a few large chunks, in place of
// one small heap object per value. It is for the collector: each small
// object is one more the mark must find and set, at the cost of a cache
// miss or two, and a replica holds several of them a listing. Pointers
// that all lead into a few large chunks are cheap to follow, so a full
// collection takes a fraction of the time (bench/HISTORY.md holds the
// figures). Marks run while requests are answered, so their length is
// what an uncached answer's tail latency pays.
//
// A pack is immutable once built. A replica built from another (a reload,
// a refresh, history added) keeps the other's chunks that it still mostly
// uses and copies the rest, so unchanged values are not copied again and
// dead ones do not pile up: a chunk stays only while at least
// packKeepLive of its bytes are still in use.
type pack struct {
	chunks [][]byte // sorted by address; values point into them
}

const (
	// packChunk is the size of a new chunk (at most: the last one of a
	// pack is as large as what is left to copy).
	packChunk = 16 << 20
	// packKeepSmall: a chunk smaller than this is copied into a new one
	// rather than kept, so that the small chunks of many refreshes merge.
	packKeepSmall = 1 << 20
)

// packKeepLive is the share of a chunk's bytes (as a fraction num/den)
// that must still be in use for a new pack to keep it.
const packKeepLiveNum, packKeepLiveDen = 3, 4

// packer builds a pack. Values are offered twice: once to count (see),
// then to place (place), in the same order.
type packer struct {
	prev  [][]byte // the previous pack's chunks, sorted by address
	live  []int    // bytes of each previous chunk still in use
	keep  []bool
	need  int // bytes to copy
	out   [][]byte
	cur   []byte // the chunk being filled
	total int    // bytes of the new pack, kept chunks included
}

func newPacker(prev *pack) *packer {
	p := &packer{}
	if prev != nil {
		p.prev = prev.chunks
		p.live = make([]int, len(p.prev))
	}
	return p
}

// chunkOf returns the index of the previous chunk holding [ptr, ptr+n),
// or -1.
func (p *packer) chunkOf(ptr unsafe.Pointer, n int) int {
	if len(p.prev) == 0 {
		return -1
	}
	at := uintptr(ptr)
	i, _ := slices.BinarySearchFunc(p.prev, at, func(c []byte, at uintptr) int {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
		switch {
		case at < base:
			return 1
		case at >= base+uintptr(len(c)):
			return -1
		}
		return 0
	})
	if i == len(p.prev) {
		return -1
	}
	c := p.prev[i]
	base := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
	if at < base || at+uintptr(n) > base+uintptr(len(c)) {
		return -1
	}
	return i
}

// see counts a value of n bytes at ptr.
func (p *packer) see(ptr unsafe.Pointer, n int) {
	if n == 0 {
		return
	}
	if i := p.chunkOf(ptr, n); i >= 0 {
		p.live[i] += n
		return
	}
	p.need += n
}

// plan decides which previous chunks stay, after every value was seen.
func (p *packer) plan() {
	p.keep = make([]bool, len(p.prev))
	for i, c := range p.prev {
		p.keep[i] = len(c) >= packKeepSmall && p.live[i]*packKeepLiveDen >= len(c)*packKeepLiveNum
		if p.keep[i] {
			p.out = append(p.out, c)
			p.total += len(c)
		} else {
			p.need += p.live[i]
		}
	}
}

// place returns where the value of n bytes at ptr lives in the new pack:
// ptr itself when its chunk is kept, else its copy.
func (p *packer) place(ptr unsafe.Pointer, n int) unsafe.Pointer {
	if n == 0 {
		return ptr
	}
	if i := p.chunkOf(ptr, n); i >= 0 && p.keep[i] {
		return ptr
	}
	if len(p.cur)+n > cap(p.cur) {
		p.cur = make([]byte, 0, max(n, min(p.need, packChunk)))
		p.out = append(p.out, p.cur[:0:0]) // replaced by the full chunk in finish
		p.total += cap(p.cur)
	}
	at := len(p.cur)
	p.cur = append(p.cur, unsafe.Slice((*byte)(ptr), n)...)
	p.out[len(p.out)-1] = p.cur[:len(p.cur):len(p.cur)]
	p.need -= n
	return unsafe.Pointer(&p.cur[at])
}

// string points *s at its place in the new pack. An empty string
// becomes "", which keeps no chunk alive.
func (p *packer) string(s *string) {
	if len(*s) == 0 {
		*s = ""
		return
	}
	*s = unsafe.String((*byte)(p.place(unsafe.Pointer(unsafe.StringData(*s)), len(*s))), len(*s))
}

// bytes points *b at its place in the new pack, with no room to append
// (an append copies). An empty slice becomes nil.
func (p *packer) bytes(b *[]byte) {
	n := len(*b)
	if n == 0 {
		*b = nil
		return
	}
	*b = unsafe.Slice((*byte)(p.place(unsafe.Pointer(unsafe.SliceData(*b)), n)), n)
}

func (p *packer) finish() pack {
	slices.SortFunc(p.out, func(a, b []byte) int {
		return compareAddr(unsafe.Pointer(unsafe.SliceData(a)), unsafe.Pointer(unsafe.SliceData(b)))
	})
	return pack{chunks: p.out}
}

func compareAddr(a, b unsafe.Pointer) int {
	switch {
	case uintptr(a) < uintptr(b):
		return -1
	case uintptr(a) > uintptr(b):
		return 1
	}
	return 0
}

// bytes returns the bytes the pack holds.
func (k *pack) bytes() int {
	n := 0
	for _, c := range k.chunks {
		n += cap(c)
	}
	return n
}

// ownStrings are the strings of a listing that are its own: not shared
// with other listings (those are interned) and not in the text arenas.
func ownStrings(l *views.Listing) [4]*string { return [4]*string{&l.ID, &l.Slug, &l.Icon, &l.Version} }

// packListings moves the listings' own strings and their sparklines into
// packs, keeping what prev (the packs of the replica they were copied or
// shared from, or nil) still mostly uses. It runs before the replica is
// published, while nothing else reads listings.
func packListings(listings []views.Listing, prevStrs, prevSparks *pack) (strs, sparks pack) {
	ps, pk := newPacker(prevStrs), newPacker(prevSparks)
	for i := range listings {
		l := &listings[i]
		for _, s := range ownStrings(l) {
			ps.see(unsafe.Pointer(unsafe.StringData(*s)), len(*s))
		}
		sp := *l.Hist.SparklineBytes()
		pk.see(unsafe.Pointer(unsafe.SliceData(sp)), len(sp))
	}
	ps.plan()
	pk.plan()
	for i := range listings {
		l := &listings[i]
		for _, s := range ownStrings(l) {
			ps.string(s)
		}
		pk.bytes(l.Hist.SparklineBytes())
	}
	return ps.finish(), pk.finish()
}
