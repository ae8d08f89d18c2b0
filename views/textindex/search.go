package textindex

import (
	"math/bits"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// textNeedle is a query prepared for scanning: the pair of bytes the scan
// looks for and how to verify a candidate.
type textNeedle struct {
	q     string
	lower []byte // q with ASCII letters in lower case
	// mask has 0x20 at each ASCII letter of lower, 0 elsewhere: a byte b
	// of the text matches lower[k] when b|mask[k] == lower[k] (a letter
	// in either case, any other byte as it is).
	mask    []byte
	ascii   bool // q is all ASCII: verify in place, ASCII letters in either case
	uniform bool // every letter of q has case forms of its own length: verify in place
	pair    bool // false: no usable pair, test every segment
	p0, p1  int  // byte offsets in q of the pair (p0 < p1)
	v0, w0  byte // the values the byte at p0 may take in matching text
	v1, w1  byte // the same at p1
	grams   gramQuery
}

// newNeedle prepares q for scanning. Matching follows ContainsFold: a
// window of len(q) bytes of the text equal to q under Unicode case
// folding. A byte of q can filter candidates when every case form of its
// letter has the same length and puts at most two values at that byte (a
// and A; ü and Ü, which differ in their second byte). The pair is the first
// and last such byte of the first stretch of q in which every letter has
// same-length case forms, so that the pair's distance is the same in any
// match.
func newNeedle(q string) textNeedle {
	n := textNeedle{q: q, lower: []byte(q), mask: make([]byte, len(q)), ascii: true, uniform: true}
	for i, c := range n.lower {
		if c >= utf8.RuneSelf {
			n.ascii = false
		} else if 'A' <= c && c <= 'Z' {
			n.lower[i] = c + 'a' - 'A'
		}
		if l := n.lower[i]; 'a' <= l && l <= 'z' {
			n.mask[i] = 0x20
		}
	}
	slots := make([]needleSlot, len(q))
	spanOf := make([]int, len(q)) // stretch number of each byte
	span := 0
	for i, r := range q {
		_, size := utf8.DecodeRuneInString(q[i:]) // 1 for an invalid byte
		var enc [][]byte
		sameLen := true
		for f := r; ; {
			e := utf8.AppendRune(nil, f)
			if len(e) != size {
				sameLen = false
			}
			enc = append(enc, e)
			if f = unicode.SimpleFold(f); f == r {
				break
			}
		}
		if n.ascii && r < utf8.RuneSelf {
			sameLen = true // an all-ASCII query matches ASCII text only (see ContainsFold)
			enc = append(enc[:0], []byte{byte(unicode.ToLower(r))}, []byte{byte(unicode.ToUpper(r))})
		}
		if !sameLen {
			n.uniform = false
			span++
			for k := range size {
				spanOf[i+k] = -1
			}
			continue
		}
		for k := range size {
			spanOf[i+k] = span
			vals := map[byte]bool{}
			for _, e := range enc {
				vals[e[k]] = true
			}
			if len(vals) > 2 {
				continue
			}
			sl := needleSlot{ok: true}
			first := true
			for v := range vals {
				if first {
					sl.v, sl.w, first = v, v, false
				} else {
					sl.w = v
				}
			}
			slots[i+k] = sl
		}
	}
	for i := 0; i < len(q); i++ {
		if !slots[i].ok {
			continue
		}
		j := -1
		for k := i + 1; k < len(q) && spanOf[k] == spanOf[i]; k++ {
			if slots[k].ok {
				j = k
			}
		}
		if j < 0 {
			continue
		}
		n.pair, n.p0, n.p1 = true, i, j
		n.v0, n.w0, n.v1, n.w1 = slots[i].v, slots[i].w, slots[j].v, slots[j].w
		break
	}
	n.grams = gramsOf(q, n.ascii, slots, spanOf)
	return n
}

// needleSlot is what newNeedle knows of one byte of a query: whether it can
// filter (ok), and the one or two values it takes in matching text.
type needleSlot struct {
	ok   bool
	v, w byte
}

// verifyAt reports whether an all-ASCII needle occurs in seg at offset at.
func (n *textNeedle) verifyAt(seg []byte, at int) bool {
	if at < 0 || at+len(n.lower) > len(seg) {
		return false
	}
	for k, c := range n.lower {
		h := seg[at+k]
		if 'A' <= h && h <= 'Z' {
			h += 'a' - 'A'
		}
		if h != c {
			return false
		}
	}
	return true
}

// scanArena sets bit i of out for each segment i in [lo, hi) of a that
// contains the needle; segments set in skip (when not nil) are passed over
// at their first candidate. lo is a multiple of 64 unless it is the arena's
// start, so that concurrent scans of disjoint ranges write disjoint words.
func scanArena(a *textArena, lo, hi int, n *textNeedle, out, skip []uint64) {
	if lo >= hi {
		return
	}
	if !n.pair {
		for i := lo; i < hi; i++ {
			if ContainsFold(a.seg(i), n.q) {
				out[i>>6] |= 1 << (i & 63)
			}
		}
		return
	}
	from := uint32(0)
	if lo > 0 {
		from = a.end[lo-1]
	}
	s := segScan{a: a, n: n, out: out, skip: skip, cur: lo, hi: hi}
	s.run(int(from), int(a.end[hi-1]))
}

// segScan walks candidates of one scan in increasing position, knowing the
// segment it is in.
type segScan struct {
	a       *textArena
	n       *textNeedle
	out     []uint64
	skip    []uint64 // segments not to test; nil for none
	cur, hi int      // current segment; end of the range
}

// candidate handles a pair found with its first byte at pos and returns
// where scanning goes on: past the segment when it matched (or, for a
// non-ASCII needle, was tested whole), else at pos+1. It returns -1 when
// the range is done.
func (s *segScan) candidate(pos int) int {
	s.seek(pos)
	if s.cur >= s.hi {
		return -1
	}
	from := 0
	if s.cur > 0 {
		from = int(s.a.end[s.cur-1])
	}
	end := int(s.a.end[s.cur])
	if s.skip != nil && s.skip[s.cur>>6]&(1<<(s.cur&63)) != 0 {
		s.cur++
		if s.cur >= s.hi {
			return -1
		}
		return end
	}
	seg := s.a.data[from:end]
	matched, whole := false, false
	switch at := pos - from - s.n.p0; {
	case s.n.ascii:
		matched = s.n.verifyAt(seg, at)
	case s.n.uniform:
		matched = at >= 0 && at+len(s.n.q) <= len(seg) && strings.EqualFold(unsafe.String(unsafe.SliceData(seg[at:]), len(s.n.q)), s.n.q)
	default:
		matched, whole = ContainsFold(unsafe.String(unsafe.SliceData(seg), len(seg)), s.n.q), true
	}
	if matched {
		s.out[s.cur>>6] |= 1 << (s.cur & 63)
	}
	if matched || whole {
		s.cur++
		if s.cur >= s.hi {
			return -1
		}
		return end
	}
	return pos + 1
}

// seek moves cur to the segment holding pos: a step at a time while the
// next few segments are passed, then by galloping and binary search, so
// that sparse candidates do not walk every segment between them.
func (s *segScan) seek(pos int) {
	end := s.a.end
	for k := 0; k < 4; k++ {
		if s.cur >= s.hi || int(end[s.cur]) > pos {
			return
		}
		s.cur++
	}
	step := 8
	lo := s.cur
	for lo+step < s.hi && int(end[lo+step]) <= pos {
		lo += step
		step *= 2
	}
	hi := min(lo+step, s.hi)
	s.cur = lo + sort.Search(hi-lo, func(k int) bool { return int(end[lo+k]) > pos })
}

// searchChunk is how many segments one step of a scan covers: a worker
// takes the next chunk of its arena and checks the deadline between chunks
// (a chunk of names is tens of microseconds). It is a multiple of 64, so
// that concurrent steps write disjoint bitmap words.
const searchChunk = 1 << 14

// search returns the listings (bit i for listing i) whose name or
// developer contains q, or with withDesc and at least three characters in
// q also whose description does on chrome, edge and firefox, ignoring
// case. Only listings in [lo, hi) are searched by name and description
// (developers' matches may set bits outside it). A nil result means the
// index is not built and the caller tests each listing itself. The caller
// hands the result back with PutBitmap.
//
// Names, developers and descriptions are searched in their trigram
// indexes once built (IndexText), and scanned before, or when q has no
// trigram the index can use.
//
// With a non-zero deadline, the search stops at the first chunk boundary
// past it and partial is true: the bitmap then holds the matches of the
// text searched so far.
func (t *Index) Search(q string, withDesc bool, lo, hi int, deadline time.Time) (out []uint64, partial bool) {
	if !t.ok {
		return nil, false
	}
	n := newNeedle(q)
	out = GetBitmap((t.listingLen + 63) / 64)
	devHit := GetBitmap((len(t.devs.end) + 63) / 64)
	defer PutBitmap(devHit)
	type chunk struct {
		a         *textArena
		g         *gramIndex // nil: scan
		lo, hi    int
		dst, skip []uint64
	}
	var chunks []chunk
	split := func(a *textArena, lo, hi int, dst, skip []uint64) {
		step := searchChunk
		g := a.grams()
		if g != nil && n.grams.usable() && g.covers(lo, hi) {
			step = gramChunkLen
		} else {
			g = nil
		}
		for from := lo; from < hi; {
			to := min(hi, (from+step)&^(step-1))
			chunks = append(chunks, chunk{a, g, from, to, dst, skip})
			from = to
		}
	}
	var stopped atomic.Bool
	run := func() {
		var next atomic.Int64
		work := func() {
			var cand []uint16
			for {
				i := int(next.Add(1) - 1)
				if i >= len(chunks) || stopped.Load() {
					return
				}
				if !deadline.IsZero() && time.Now().After(deadline) {
					stopped.Store(true)
					return
				}
				c := chunks[i]
				if c.g != nil {
					cand = c.g.searchChunk(c.a, c.lo/gramChunkLen, &n.grams, &n, c.lo, c.hi, c.dst, c.skip, cand)
				} else {
					scanArena(c.a, c.lo, c.hi, &n, c.dst, c.skip)
				}
			}
		}
		var wg sync.WaitGroup
		for range min(runtime.GOMAXPROCS(0), len(chunks)) - 1 {
			wg.Go(work)
		}
		work()
		wg.Wait()
		chunks = chunks[:0]
	}
	// Names and developers first; then descriptions, skipping listings
	// already found (descriptions often repeat the name).
	lo, hi = max(lo, 0), min(hi, t.listingLen)
	split(&t.names, lo, hi, out, nil)
	split(&t.devs, 0, len(t.devs.end), devHit, nil)
	run()
	for w, b := range devHit {
		for ; b != 0; b &= b - 1 {
			d := w<<6 | bits.TrailingZeros64(b)
			for _, i := range t.devListings[t.devStart[d]:t.devStart[d+1]] {
				out[i>>6] |= 1 << (i & 63)
			}
		}
	}
	var descHit []uint64
	dlo, dhi := max(lo, t.descFrom), min(hi, t.descTo)
	if withDesc && !stopped.Load() && utf8.RuneCountInString(q) >= 3 && dlo < dhi {
		descHit = GetBitmap(len(out))
		defer PutBitmap(descHit)
		split(&t.descs, dlo, dhi, descHit, out)
		run()
	}
	for w, b := range descHit {
		out[w] |= b
	}
	return out, stopped.Load()
}

// ContainsFold reports whether sub occurs in s under Unicode case folding.
func ContainsFold(s, sub string) bool {
	if len(sub) == 0 {
		return true
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if strings.EqualFold(s[i:i+len(sub)], sub) {
			return true
		}
	}
	return false
}
