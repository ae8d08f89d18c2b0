package textindex

import (
	"encoding/binary"
	"math/bits"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
)

// gramIndex is an inverted index of the character trigrams of a text
// arena's segments: a search reads the posting lists of a query's trigrams
// instead of every byte of text, so that its cost follows the listings that
// hold the query's rarest trigram rather than the size of the text.
//
// A trigram is three consecutive bytes with ASCII letters in lower case,
// its key the three bytes in 24 bits. Segments are indexed in chunks of
// gramChunkLen: each chunk keeps its keys in order and, for each key, the
// chunk-local numbers of the segments that hold it as varint gaps (one byte
// for most), so the index costs about a byte and a half per distinct
// trigram of a segment (some 20 B a listing for names of 15 bytes) and a
// chunk is built, and searched, on its own.
//
// The index filters: a candidate is verified against its segment unless the
// postings alone decide (a query of three ASCII bytes is exactly its
// trigram's posting list; one of two is the union of the lists of the
// trigrams that begin or end with it, plus the segments of two bytes).
type gramIndex struct {
	chunks []gramChunk
	// lo and hi bound the segments indexed, whole chunks: the chunks
	// outside are empty (descriptions are indexed only where they are
	// searched).
	lo, hi int
}

const (
	gramChunkBits = 16
	gramChunkLen  = 1 << gramChunkBits // a multiple of 64: chunks write disjoint bitmap words
)

// gramChunk indexes segments [c*gramChunkLen, (c+1)*gramChunkLen) of its
// arena.
type gramChunk struct {
	keys  []uint32 // the trigram keys its segments hold, ascending
	offs  []uint32 // the postings of keys[k] are data[offs[k]:offs[k+1]]
	data  []byte   // per key: uvarint gaps between ascending local segment numbers (each minus the previous, minus one)
	short []uint16 // local numbers of the segments of one or two bytes, which hold no trigram
}

// foldASCII puts an ASCII capital letter in lower case and leaves every
// other byte as it is.
func foldASCII(b byte) byte {
	if 'A' <= b && b <= 'Z' {
		return b + 'a' - 'A'
	}
	return b
}

func gramKey(a, b, c byte) uint32 {
	return uint32(foldASCII(a))<<16 | uint32(foldASCII(b))<<8 | uint32(foldASCII(c))
}

// gramSlot holds the trigram index of one arena once it is built. Arenas
// are values that replicas share (see Build); the slot is a pointer, so
// that a replica sharing an arena shares its index too.
type gramSlot struct {
	mu sync.Mutex // held while the index is built: a second caller waits for it
	p  atomic.Pointer[gramIndex]
}

// grams returns a's trigram index, or nil while it is not built.
func (a *textArena) grams() *gramIndex {
	if a.slot == nil {
		return nil
	}
	return a.slot.p.Load()
}

// indexGrams builds the trigram index of a's segments [lo, hi) (and the
// rest of their chunks) if a's index is not built yet.
func (a *textArena) indexGrams(lo, hi int) {
	if a.slot == nil || a.slot.p.Load() != nil {
		return
	}
	a.slot.mu.Lock()
	defer a.slot.mu.Unlock()
	if a.slot.p.Load() == nil {
		a.slot.p.Store(buildGrams(a, lo, hi))
	}
}

// covers reports whether g indexes segments [lo, hi).
func (g *gramIndex) covers(lo, hi int) bool { return lo >= g.lo && hi <= g.hi }

// buildGrams indexes the chunks of a that hold segments [lo, hi), spread
// over the cores.
func buildGrams(a *textArena, lo, hi int) *gramIndex {
	g := &gramIndex{chunks: make([]gramChunk, (len(a.end)+gramChunkLen-1)/gramChunkLen)}
	lo, hi = max(lo, 0), min(hi, len(a.end))
	if lo >= hi {
		return g
	}
	first, last := lo/gramChunkLen, (hi-1)/gramChunkLen
	g.lo, g.hi = first*gramChunkLen, min(len(a.end), (last+1)*gramChunkLen)
	next := atomic.Int64{}
	next.Store(int64(first))
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), last-first+1) {
		wg.Go(func() {
			var b gramBuilder
			for {
				c := int(next.Add(1) - 1)
				if c > last {
					return
				}
				g.chunks[c] = b.chunk(a, c*gramChunkLen, min(len(a.end), (c+1)*gramChunkLen))
			}
		})
	}
	wg.Wait()
	return g
}

// gramBuilder holds one worker's buffers, reused from chunk to chunk.
type gramBuilder struct {
	segKeys      []uint32
	pairs, swap  []uint64 // key<<16 | local segment number
	data         []byte
	keys, counts []uint32
}

// chunk indexes segments [lo, hi) of a.
func (b *gramBuilder) chunk(a *textArena, lo, hi int) gramChunk {
	var c gramChunk
	b.pairs = b.pairs[:0]
	from := uint32(0)
	if lo > 0 {
		from = a.end[lo-1]
	}
	for i := lo; i < hi; i++ {
		seg := a.data[from:a.end[i]]
		from = a.end[i]
		local := uint64(i - lo)
		if len(seg) < 3 {
			if len(seg) > 0 {
				c.short = append(c.short, uint16(local))
			}
			continue
		}
		b.segKeys = b.segKeys[:0]
		for j := 0; j+3 <= len(seg); j++ {
			b.segKeys = append(b.segKeys, gramKey(seg[j], seg[j+1], seg[j+2]))
		}
		slices.Sort(b.segKeys)
		b.segKeys = slices.Compact(b.segKeys)
		for _, k := range b.segKeys {
			b.pairs = append(b.pairs, uint64(k)<<gramChunkBits|local)
		}
	}
	b.sortPairs()
	// One run of pairs a key, its local numbers ascending.
	b.data, b.keys, b.counts = b.data[:0], b.keys[:0], b.counts[:0]
	for p := 0; p < len(b.pairs); {
		k := uint32(b.pairs[p] >> gramChunkBits)
		b.keys = append(b.keys, k)
		b.counts = append(b.counts, uint32(len(b.data)))
		prev := int64(-1)
		for ; p < len(b.pairs) && uint32(b.pairs[p]>>gramChunkBits) == k; p++ {
			local := int64(b.pairs[p] & (gramChunkLen - 1))
			b.data = binary.AppendUvarint(b.data, uint64(local-prev-1))
			prev = local
		}
	}
	c.keys = slices.Clone(b.keys)
	c.offs = append(slices.Clone(b.counts), uint32(len(b.data)))
	c.data = slices.Clone(b.data)
	c.short = slices.Clip(c.short)
	return c
}

// sortPairs sorts b.pairs by key, keeping the order of equal keys (their
// local numbers, ascending as appended): two passes of 12-bit digits.
func (b *gramBuilder) sortPairs() {
	if cap(b.swap) < len(b.pairs) {
		b.swap = make([]uint64, len(b.pairs), cap(b.pairs))
	}
	src, dst := b.pairs, b.swap[:len(b.pairs)]
	var counts [1 << 12]int
	for shift := uint(gramChunkBits); shift < gramChunkBits+24; shift += 12 {
		clear(counts[:])
		for _, p := range src {
			counts[(p>>shift)&0xfff]++
		}
		pos := 0
		for d, n := range counts {
			counts[d] = pos
			pos += n
		}
		for _, p := range src {
			d := (p >> shift) & 0xfff
			dst[counts[d]] = p
			counts[d]++
		}
		src, dst = dst, src
	}
	b.pairs, b.swap = src, dst // two passes: src is b.pairs' array again
}

// postings returns the encoded posting list of key in c, or nil when no
// segment of c holds key.
func (c *gramChunk) postings(key uint32) []byte {
	k, ok := slices.BinarySearch(c.keys, key)
	if !ok {
		return nil
	}
	return c.data[c.offs[k]:c.offs[k+1]]
}

// decodePostings appends the local numbers of list to dst.
func decodePostings(dst []uint16, list []byte) []uint16 {
	prev := -1
	for len(list) > 0 {
		gap, n := binary.Uvarint(list)
		list = list[n:]
		prev += int(gap) + 1
		dst = append(dst, uint16(prev))
	}
	return dst
}

// intersectPostings keeps of cand (ascending) the numbers list holds.
func intersectPostings(cand []uint16, list []byte) []uint16 {
	out := cand[:0]
	prev, j := -1, 0
	for len(list) > 0 && j < len(cand) {
		gap, n := binary.Uvarint(list)
		list = list[n:]
		prev += int(gap) + 1
		for j < len(cand) && int(cand[j]) < prev {
			j++
		}
		if j < len(cand) && int(cand[j]) == prev {
			out = append(out, cand[j])
			j++
		}
	}
	return out
}

// setPostings sets in out the bit of each segment of list, offset by base,
// that lies in [lo, hi).
func setPostings(out []uint64, list []byte, base, lo, hi int) {
	prev := -1
	for len(list) > 0 {
		gap, n := binary.Uvarint(list)
		list = list[n:]
		prev += int(gap) + 1
		if i := base + prev; i >= lo && i < hi {
			out[i>>6] |= 1 << (i & 63)
		}
	}
}

// gramQuery is what an index can use of a needle: the keys of its
// trigrams, or the folded pair of a two-byte ASCII needle.
type gramQuery struct {
	keys  []uint32 // distinct trigram keys every match holds, rarest first once looked up
	exact bool     // a segment holding every key matches: no verification
	two   bool     // a two-byte ASCII needle: the union of the trigrams around its pair
	pair  uint32   // its folded bytes, b0<<8 | b1
}

// usable reports whether the index can answer n.
func (g *gramQuery) usable() bool { return g.two || len(g.keys) > 0 }

// searchChunk sets in out the bit of each segment of chunk ci, within [lo,
// hi), that contains the needle; segments set in skip (when not nil) are
// not tested. cand is scratch, returned for reuse.
func (g *gramIndex) searchChunk(a *textArena, ci int, q *gramQuery, n *textNeedle, lo, hi int, out, skip []uint64, cand []uint16) []uint16 {
	c := &g.chunks[ci]
	base := ci * gramChunkLen
	if q.two {
		// Every occurrence in a segment of three bytes or more begins a
		// trigram or ends one; the segments of two bytes are tested.
		k := sort.Search(len(c.keys), func(k int) bool { return c.keys[k] >= q.pair<<8 })
		for ; k < len(c.keys) && c.keys[k]>>8 == q.pair; k++ {
			setPostings(out, c.data[c.offs[k]:c.offs[k+1]], base, lo, hi)
		}
		for x := range uint32(256) {
			if list := c.postings(x<<16 | q.pair); list != nil {
				setPostings(out, list, base, lo, hi)
			}
		}
		for _, s := range c.short {
			if i := base + int(s); i >= lo && i < hi && n.matches(a.seg(i)) {
				out[i>>6] |= 1 << (i & 63)
			}
		}
		return cand
	}
	lists := make([][]byte, 0, 8)
	for _, k := range q.keys {
		list := c.postings(k)
		if list == nil {
			return cand // a trigram no segment of the chunk holds
		}
		lists = append(lists, list)
	}
	slices.SortFunc(lists, func(x, y []byte) int { return len(x) - len(y) })
	cand = decodePostings(cand[:0], lists[0])
	for _, list := range lists[1:] {
		if len(cand) == 0 {
			break
		}
		cand = intersectPostings(cand, list)
	}
	for _, s := range cand {
		i := base + int(s)
		if i < lo || i >= hi || (skip != nil && skip[i>>6]&(1<<(i&63)) != 0) {
			continue
		}
		if q.exact || n.matches(a.seg(i)) {
			out[i>>6] |= 1 << (i & 63)
		}
	}
	return cand
}

// matches reports whether seg contains the needle.
func (n *textNeedle) matches(seg string) bool {
	if !n.ascii {
		return ContainsFold(seg, n.q)
	}
	if len(n.lower) == 0 {
		return true
	}
	if n.pair && n.p0 == 0 { // always, for a needle of two bytes or more
		return n.findPair(seg)
	}
	return n.matchesFrom(seg, 0)
}

// matchesFrom reports whether an all-ASCII needle occurs in seg at an
// offset of at least from, testing each offset in turn.
func (n *textNeedle) matchesFrom(seg string, from int) bool {
	// Without branches on case: a byte matches lower[k] when it does
	// once or'ed with mask[k] (see textNeedle).
	lower, mask := n.lower, n.mask[:len(n.lower)]
	first, firstMask := lower[0], mask[0]
	for at := from; at+len(lower) <= len(seg); at++ {
		if seg[at]|firstMask != first {
			continue
		}
		if n.matchesAt(seg, at) {
			return true
		}
	}
	return false
}

// matchesAt reports whether an all-ASCII needle occurs in seg at offset at,
// which leaves room for it.
func (n *textNeedle) matchesAt(seg string, at int) bool {
	lower, mask := n.lower, n.mask[:len(n.lower)]
	w := seg[at : at+len(lower)]
	for k := range lower {
		if w[k]|mask[k] != lower[k] {
			return false
		}
	}
	return true
}

// findPairSWAR reports whether an all-ASCII needle with a pair occurs in
// seg: its first and last bytes are tested eight offsets at a time in
// plain Go (as runSWAR does over an arena), and each offset where both
// match is verified.
func (n *textNeedle) findPairSWAR(seg string) bool {
	d := n.p1
	size := len(n.lower)
	v0, w0 := uint64(n.v0)*lowBytes, uint64(n.w0)*lowBytes
	v1, w1 := uint64(n.v1)*lowBytes, uint64(n.w1)*lowBytes
	at := 0
	for ; at+d+8 <= len(seg); at += 8 {
		x := loadString64(seg[at:])
		y := loadString64(seg[at+d:])
		found := (zeroBytes(x^v0) | zeroBytes(x^w0)) & (zeroBytes(y^v1) | zeroBytes(y^w1))
		for found != 0 {
			p := at + bits.TrailingZeros64(found)>>3
			found &= found - 1
			if p+size <= len(seg) && n.matchesAt(seg, p) {
				return true
			}
		}
	}
	return n.matchesFrom(seg, at)
}

// loadString64 reads the first eight bytes of s, little-endian.
func loadString64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// gramsOf returns what a trigram index can use of q, from the byte slots
// newNeedle found: a trigram of q is usable when its three bytes lie in one
// stretch of same-length case forms and each is one value or an ASCII
// letter in either case (the forms the index folds to one key).
func gramsOf(q string, ascii bool, slots []needleSlot, spanOf []int) gramQuery {
	var g gramQuery
	usable := func(i int) bool {
		s := slots[i]
		return s.ok && (s.v == s.w || foldASCII(s.v) == foldASCII(s.w))
	}
	if ascii && len(q) == 2 {
		g.two, g.pair = true, uint32(foldASCII(q[0]))<<8|uint32(foldASCII(q[1]))
		return g
	}
	for i := 0; i+3 <= len(q); i++ {
		if !usable(i) || !usable(i+1) || !usable(i+2) || spanOf[i] != spanOf[i+1] || spanOf[i] != spanOf[i+2] || spanOf[i] < 0 {
			continue
		}
		g.keys = append(g.keys, uint32(foldASCII(slots[i].v))<<16|uint32(foldASCII(slots[i+1].v))<<8|uint32(foldASCII(slots[i+2].v)))
	}
	slices.Sort(g.keys)
	g.keys = slices.Compact(g.keys)
	g.exact = ascii && len(q) == 3
	return g
}

// size returns the bytes g holds.
func (g *gramIndex) size() int {
	n := 0
	for i := range g.chunks {
		c := &g.chunks[i]
		n += 4*len(c.keys) + 4*len(c.offs) + len(c.data) + 2*len(c.short)
	}
	return n
}
