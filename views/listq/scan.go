package listq

import (
	"math"
	"math/bits"
	"runtime"
	"slices"
	"sync"

	"github.com/edge-stats/edge/views"
)

// A kernel is one filter of a query applied to 64 listings at once: given
// the bits of the listings from base that passed so far, it returns them
// less those that fail its filter. A scan runs the flag word first, then
// each kernel while any bit is left, reading one column at a time, so a
// filter costs only for the listings the ones before it let through.
type kernel func(base int, in uint64) uint64

// denseMin is how many of a word's 64 listings must be left for a kernel
// to test all 64 without a branch rather than each left one in turn
// (whose branch a filter that keeps about half mispredicts).
const denseMin = 12

// rangeKernel keeps the listings whose value in col lies in [lo, hi],
// without a branch on the values: v is in the range when v−lo ≤ hi−lo in
// 64-bit unsigned arithmetic, which a subtraction's borrow tells.
func rangeKernel[T int64 | int16 | uint32 | views.Day](col []T, lo, hi T) kernel {
	if lo > hi {
		return func(int, uint64) uint64 { return 0 } // an empty range
	}
	ulo := uint64(int64(lo))
	span := uint64(int64(hi)) - ulo
	scalar := func(base int, in uint64) uint64 {
		if bits.OnesCount64(in) >= denseMin {
			vals := col[base:min(base+64, len(col))]
			var keep uint64
			for k, v := range vals {
				_, out := bits.Sub64(span, uint64(int64(v))-ulo, 0) // 1 when v is out of range
				keep |= (out ^ 1) << k
			}
			return in & keep
		}
		out := in
		for b := in; b != 0; b &= b - 1 {
			k := bits.TrailingZeros64(b)
			if uint64(int64(col[base+k]))-ulo > span {
				out &^= 1 << k
			}
		}
		return out
	}
	if k := rangeKernelSIMD(col, lo, hi, scalar); k != nil {
		return k
	}
	return scalar
}

// bitmapKernel keeps the listings set in bm.
func bitmapKernel(bm []uint64) kernel {
	return func(base int, in uint64) uint64 {
		if w := base >> 6; w < len(bm) {
			return in & bm[w]
		}
		return 0
	}
}

// kernels returns p's filters other than the flag word as kernels, and
// whether some filter remains that only the listing itself can answer
// (see matchRest).
func (p *queryPlan) kernels() (ks []kernel, rest bool) {
	c, q := p.c, p.q
	if al := q.MinAccessLevel; al != nil {
		meta, min := c.meta, *al
		ks = append(ks, func(base int, in uint64) uint64 {
			out := in
			for b := in; b != 0; b &= b - 1 {
				k := bits.TrailingZeros64(b)
				if l := uint8(meta[base+k]>>metaAccessShift) & 7; l == 0 || l < min {
					out &^= 1 << k
				}
			}
			return out
		})
	}
	if q.MinSize != nil || q.MaxSize != nil {
		lo, hi := countBounds(q.MinSize, q.MaxSize)
		meta, usage, rc := c.meta, c.usage, c.ratingCount
		ks = append(ks, func(base int, in uint64) uint64 {
			out := in
			for b := in; b != 0; b &= b - 1 {
				k := bits.TrailingZeros64(b)
				i := base + k
				sz := usage[i]
				if views.Store(meta[i]>>metaStoreShift&7) == views.Apple {
					sz = rc[i]
				}
				if sz < lo || sz > hi {
					out &^= 1 << k
				}
			}
			return out
		})
	}
	if q.MinInstalls != nil || q.MaxInstalls != nil {
		lo, hi, ok := installBounds(q.MinInstalls, q.MaxInstalls)
		if !ok {
			return []kernel{func(int, uint64) uint64 { return 0 }}, false
		}
		ks = append(ks, rangeKernel(c.usage, lo, hi))
	}
	if q.MinRating != nil || q.MaxRating != nil {
		ks = append(ks, rangeKernel(c.rating, max(p.rMin, 0), p.rMax))
	}
	if q.MinRatingCount != nil || q.MaxRatingCount != nil {
		lo, hi := countBounds(q.MinRatingCount, q.MaxRatingCount)
		ks = append(ks, rangeKernel(c.rating, 0, math.MaxInt16), rangeKernel(c.ratingCount, lo, hi))
	}
	if p.minVer != 0 || p.maxVer != 0 {
		hi := p.maxVer
		if hi == 0 {
			hi = math.MaxUint32
		}
		ks = append(ks, rangeKernel(c.version, max(p.minVer, 1), hi))
	}
	if q.UpdatedAfter != nil || q.UpdatedBefore != nil {
		lo, hi := views.Day(math.MinInt32), views.Day(math.MaxInt32)
		if q.UpdatedAfter != nil {
			lo = *q.UpdatedAfter
		}
		if q.UpdatedBefore != nil {
			hi = *q.UpdatedBefore
		}
		// NoDay is a missing date, which never matches.
		ks = append(ks, rangeKernel(c.updated, lo, hi), notKernel(c.updated, views.NoDay))
	}
	if q.FirstSeenAfter != nil || q.FirstSeenBefore != nil {
		if p.dayHi == math.MinInt64 {
			return []kernel{func(int, uint64) uint64 { return 0 }}, false
		}
		ks = append(ks, rangeKernel(c.firstSeen, p.dayLo, p.dayHi-1))
	}
	if p.delistedOnly && (p.delLo != math.MinInt64 || p.delHi != math.MaxInt64) {
		if p.delHi == math.MinInt64 {
			return []kernel{func(int, uint64) uint64 { return 0 }}, false
		}
		ks = append(ks, rangeKernel(c.delisted, p.delLo, p.delHi-1))
	}
	if p.has != nil {
		ks = append(ks, bitmapKernel(p.has))
	}
	if q.Category != nil && !p.catListed && p.cat != 0 {
		ks = append(ks, equalKernel(c.catOrd, p.cat))
	}
	if p.text != nil {
		// First: it clears most words at once.
		ks = append([]kernel{bitmapKernel(p.text)}, ks...)
	}
	if p.none {
		ks = []kernel{func(int, uint64) uint64 { return 0 }}
	}
	rest = (q.Topic != nil && !p.topicListed) || (q.Category != nil && !p.catListed && p.cat == 0) ||
		q.Permission != nil || (p.text == nil && q.Q != "")
	return ks, rest
}

// notKernel keeps the listings whose value in col is not v.
func notKernel[T comparable](col []T, v T) kernel {
	return func(base int, in uint64) uint64 {
		out := in
		for b := in; b != 0; b &= b - 1 {
			k := bits.TrailingZeros64(b)
			if col[base+k] == v {
				out &^= 1 << k
			}
		}
		return out
	}
}

// equalKernel keeps the listings whose value in col is v.
func equalKernel(col []uint16, v uint16) kernel {
	return func(base int, in uint64) uint64 {
		out := in
		for b := in; b != 0; b &= b - 1 {
			k := bits.TrailingZeros64(b)
			if col[base+k] != v {
				out &^= 1 << k
			}
		}
		return out
	}
}

// countBounds returns the range of counts that bounds minC and maxC
// (nil: none) admit; a count is never negative (-1 marks a missing one).
func countBounds(minC, maxC *int64) (lo, hi int64) {
	lo, hi = 0, math.MaxInt64
	if minC != nil {
		lo = max(lo, *minC)
	}
	if maxC != nil {
		hi = *maxC
	}
	return lo, hi
}

// installBounds turns the float bounds of minInstalls and maxInstalls into
// the integer range of usage figures they admit; ok is false when none is.
func installBounds(minF, maxF *float64) (lo, hi int64, ok bool) {
	lo, hi = 0, math.MaxInt64
	if minF != nil && !math.IsNaN(*minF) && *minF > 0 {
		if *minF >= math.MaxInt64 {
			return 0, 0, false
		}
		lo = int64(math.Ceil(*minF))
	}
	if maxF != nil && !math.IsNaN(*maxF) {
		switch {
		case *maxF < 0:
			return 0, 0, false
		case *maxF < math.MaxInt64:
			hi = int64(math.Floor(*maxF))
		}
	}
	return lo, hi, lo <= hi
}

// matchRest tests the filters that kernels leave to the listing itself:
// a topic or permission not listed, a category without its column, and
// text without the index.
func (p *queryPlan) matchRest(l *views.Listing) bool {
	q := p.q
	if q.Topic != nil && !p.topicListed && !slices.Contains(l.Topics, *q.Topic) {
		return false
	}
	if q.Category != nil && !p.catListed && p.cat == 0 && l.Category != *q.Category {
		return false
	}
	if q.Permission != nil && !slices.Contains(l.Permissions, *q.Permission) {
		return false
	}
	if p.text == nil && q.Q != "" && !q.matchText(l) {
		return false
	}
	return true
}

// scanParallelMin is how many listings a scan covers before it splits
// its range over the cores: one request at a time then takes 1/cores of
// the time, and under load the halves just queue like other requests.
const scanParallelMin = 1 << 20

// scan sets in match the bits of the listings in [lo, hi) that pass
// every filter of p and returns how many do. Large ranges are split over
// the cores by whole words of the bitmap, so the halves never write the
// same word.
func (p *queryPlan) scan(ls []views.Listing, match []uint64, lo, hi int) int {
	ks, rest := p.kernels()
	procs := runtime.GOMAXPROCS(0)
	if hi-lo < p.c.parallelMin || procs < 2 {
		return p.scanWords(ls, ks, rest, match, lo, hi)
	}
	step := ((hi-lo)/procs + 63) &^ 63
	totals := make([]int, procs)
	var wg sync.WaitGroup
	for k := range procs {
		from := lo + k*step
		if k > 0 {
			from &^= 63 // start on a word boundary
		}
		to := min(hi, (lo+(k+1)*step)&^63)
		if k == procs-1 {
			to = hi
		}
		if from >= to {
			continue
		}
		wg.Go(func() { totals[k] = p.scanWords(ls, ks, rest, match, max(from, lo), to) })
	}
	wg.Wait()
	total := 0
	for _, t := range totals {
		total += t
	}
	return total
}

// flagBit is 1 when flag word w has w&mask == want, without a branch to
// mispredict.
func flagBit(w, mask, want uint16) uint64 { return (uint64(w&mask^want) - 1) >> 63 }

// flagWordScalar is flagWord one listing at a time.
func flagWordScalar(meta []uint16, base int, mask, want uint16) uint64 {
	var in uint64
	for k, w := range meta[base : base+64] {
		in |= flagBit(w, mask, want) << k
	}
	return in
}

func (p *queryPlan) scanWords(ls []views.Listing, ks []kernel, rest bool, match []uint64, lo, hi int) int {
	meta, mask, want := p.c.meta, p.maskMeta, p.wantMeta
	total := 0
	for base := lo &^ 63; base < hi; base += 64 {
		from, to := max(base, lo), min(base+64, hi)
		var in uint64
		if from == base && to == base+64 {
			in = flagWord(meta, base, mask, want)
		} else {
			for i := from; i < to; i++ {
				in |= flagBit(meta[i], mask, want) << (i - base)
			}
		}
		for _, k := range ks {
			if in == 0 {
				break
			}
			in = k(base, in)
		}
		if rest {
			for b := in; b != 0; b &= b - 1 {
				k := bits.TrailingZeros64(b)
				if !p.matchRest(&ls[base+k]) {
					in &^= 1 << k
				}
			}
		}
		match[base>>6] |= in
		total += bits.OnesCount64(in)
	}
	return total
}
