package listq

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
	"strings"

	"github.com/edge-stats/edge/views"
)

// A walk visits the listings of a query's stores in the query's order:
// first every listing with a value for the sort (descending, or ascending
// with q.Asc; ties by store and id, reversed when ascending), then those
// without one, by store and id. A walk of one store reads its segment of
// the sort order in sequence; a walk of every store merges the segments'
// first parts, comparing the sort values of their heads.
type walk struct {
	e      *Engine
	order  []int32
	sort   Sort
	asc    bool
	segs   []walkSeg
	m      int  // the segment whose second part is being walked
	halted bool // see halt
	// onlyWithValue: the listings without a value are not listed
	// (Query.OnlyWithValue of a growth sort).
	onlyWithValue bool
}

// halt ends the walk: called from next's match function, it makes next
// return at once with no listing.
func (w *walk) halt() { w.halted = true }

// walkSeg is one store's segment of a walk: the next position of its
// first part and where that part ends (next moves by step), and the range
// of its second part still to visit.
type walkSeg struct {
	store           views.Store
	next, end, step int
	mFrom, mTo      int
	head            sortVal // the sort value at next, once ready
	ready           bool    // next is at a match (or the end), and head is its value
	// A listed segment holds its matches themselves, found in the bitmap
	// and sorted (see listSparse): those with a value in the walk's
	// order, then those without by index. A store with few matches is
	// cheaper sorted than walked: a merge looks ahead to each segment's
	// next match, which in a sparse segment is far.
	listed bool
	pres   []sortVal
	miss   []int32
}

// sortVal is a listing's place in a sort: its index, and its value, as a
// number or, for the name and category sorts, as text.
type sortVal struct {
	j    int32
	key  int64
	text string
}

// byText reports whether sort i orders by text.
func byText(s Sort) bool { return s >= 0 && s < numSorts && catalogue[s].ByText }

// val returns listing j's sort value; it must have one.
func (e *Engine) val(j int32, sort Sort) sortVal {
	switch {
	case sort == SortName:
		return sortVal{j: j, text: e.ls[j].Name}
	case sort == SortCategory:
		return sortVal{j: j, text: e.ls[j].Category}
	}
	k, _ := e.sortKey(int(j), sort)
	return sortVal{j: j, key: k}
}

// cmpText orders names as the sort order does: by their first 8 bytes,
// then by the rest (see nameKeys).
func cmpText(a, b string) int {
	return cmp.Or(cmp.Compare(prefix8(a), prefix8(b)), strings.Compare(suffix(a, 8), suffix(b, 8)))
}

// before reports whether a comes before b among listings with a value:
// the greater value first (descending; ties by index), or with asc the
// smaller (ties by index, reversed).
func (w *walk) before(a, b sortVal) bool {
	var c int
	if byText(w.sort) {
		c = cmpText(a.text, b.text)
	} else {
		c = cmp.Compare(a.key, b.key)
	}
	if c == 0 {
		c = cmp.Compare(b.j, a.j)
	}
	if w.asc {
		return c < 0
	}
	return c > 0
}

// newWalk returns the walk of q's order over q's store (every store when
// q.Store is nil), from the start. A query of listings with a value only
// (Query.OnlyWithValue) has no second parts.
func (e *Engine) newWalk(q *Query) *walk {
	o := &e.orders
	w := &walk{e: e, order: o.order[q.Sort], sort: q.Sort, asc: q.Asc, onlyWithValue: q.OnlyWithValue && growthSort(q.Sort)}
	seg, present := &o.seg[q.Sort], &o.present[q.Sort]
	add := func(s views.Store) {
		from := seg[s]
		ws := walkSeg{store: s, next: from, end: from + present[s], step: 1, mFrom: from + present[s], mTo: seg[s+1]}
		if q.Asc {
			ws.next, ws.end, ws.step = from+present[s]-1, from-1, -1
		}
		if w.onlyWithValue {
			ws.mTo = ws.mFrom
		}
		w.segs = append(w.segs, ws)
	}
	if q.Store != nil {
		add(*q.Store)
	} else {
		w.segs = make([]walkSeg, 0, views.NumStores)
		for _, s := range views.Stores {
			add(s)
		}
	}
	return w
}

// next returns the next listing of the walk that passes match, whether
// it has a sort value (comes from a first part), and false at the end.
// Each segment's head moves to its next match before it is compared, so
// a merge reads the sort values of matches only.
func (w *walk) next(match func(int32) bool) (j int32, hasKey, ok bool) {
	best := -1
	for k := range w.segs {
		s := &w.segs[k]
		if s.listed {
			if len(s.pres) > 0 && (best < 0 || w.before(s.pres[0], w.segs[best].head)) {
				s.head, best = s.pres[0], k
			}
			continue
		}
		if !s.ready {
			for s.next != s.end && !match(w.order[s.next]) {
				if w.halted {
					return 0, false, false
				}
				s.next += s.step
			}
			if s.next != s.end && len(w.segs) > 1 {
				s.head = w.e.val(w.order[s.next], w.sort)
			}
			s.ready = true
		}
		if s.next == s.end {
			continue
		}
		if best < 0 || w.before(s.head, w.segs[best].head) {
			best = k
		}
	}
	if best >= 0 && w.segs[best].listed {
		s := &w.segs[best]
		j, s.pres = s.pres[0].j, s.pres[1:]
		return j, true, true
	}
	if best >= 0 {
		s := &w.segs[best]
		j = w.order[s.next]
		s.next += s.step
		s.ready = false
		return j, true, true
	}
	for ; w.m < len(w.segs); w.m++ {
		if s := &w.segs[w.m]; s.listed {
			if len(s.miss) > 0 {
				j, s.miss = s.miss[0], s.miss[1:]
				return j, false, true
			}
			continue
		}
		for s := &w.segs[w.m]; s.mFrom < s.mTo; {
			j = w.order[s.mFrom]
			s.mFrom++
			if match(j) {
				return j, false, true
			}
			if w.halted {
				return 0, false, false
			}
		}
	}
	return 0, false, false
}

// clipToFilter narrows w to the listings whose sort value lies in the
// range a filter of q asks of that same value (size bounds when sorted by
// size, install bounds when sorted by installs): they are one run of each
// segment's first part, found by binary search, and listings without the
// value fail the filter. Such a walk visits no listing the range rules
// out.
func (w *walk) clipToFilter(q *Query) {
	lo, hi := int64(math.MinInt64), int64(math.MaxInt64)
	switch {
	case q.Sort == SortSize && (q.MinSize != nil || q.MaxSize != nil):
		if q.MinSize != nil {
			lo = *q.MinSize
		}
		if q.MaxSize != nil {
			hi = *q.MaxSize
		}
	case q.Sort == SortInstalls && (q.MinInstalls != nil || q.MaxInstalls != nil):
		var ok bool
		if lo, hi, ok = installBounds(q.MinInstalls, q.MaxInstalls); !ok {
			lo, hi = 1, 0 // nothing
		}
	default:
		return
	}
	key := func(pos int) int64 {
		k, _ := w.e.sortKey(int(w.order[pos]), w.sort)
		return k
	}
	for i := range w.segs {
		s := &w.segs[i]
		a, b := s.next, s.end // the first part, ascending by position: values descending
		if w.asc {
			a, b = s.end+1, s.next+1
		}
		from := a + sort.Search(b-a, func(i int) bool { return key(a+i) <= hi })
		to := from + sort.Search(b-from, func(i int) bool { return key(from+i) < lo })
		if w.asc {
			s.next, s.end = to-1, from-1
		} else {
			s.next, s.end = from, to
		}
		s.mFrom = s.mTo
	}
}

// seek moves every segment of w to just after the position after, so
// that the walk goes on with the first listing that follows it.
func (w *walk) seek(after *Pos) {
	for k := range w.segs {
		s := &w.segs[k]
		if !after.HasKey { // after has no value: every first part is behind it
			s.next = s.end
			s.mFrom += sort.Search(s.mTo-s.mFrom, func(i int) bool { return w.cmpAfter(s.mFrom+i, false, after) > 0 })
			continue
		}
		// The first part ascending by position, whichever way it is walked.
		lo, n := s.next, s.end-s.next
		if w.asc {
			lo, n = s.end+1, s.next-s.end
		}
		if w.asc {
			// Walked downward: go on from the last position that comes
			// before after in the descending order.
			s.next = lo + sort.Search(n, func(i int) bool { return w.cmpAfter(lo+i, true, after) >= 0 }) - 1
		} else {
			s.next = lo + sort.Search(n, func(i int) bool { return w.cmpAfter(lo+i, true, after) > 0 })
		}
	}
}

// cmpAfter compares the listing at position pos (in a first part when
// present) with after, in the descending walk's order: -1 before it, 0
// the same, +1 after it.
func (w *walk) cmpAfter(pos int, present bool, after *Pos) int {
	j := w.order[pos]
	l := &w.e.ls[j]
	if present {
		if !after.HasKey {
			return -1 // after sits in the second part, which comes last
		}
		if byText(w.sort) {
			if c := cmpText(after.Name, l.Name); c != 0 {
				return c // descending: a greater name comes first
			}
		} else {
			k, _ := w.e.sortKey(int(j), w.sort)
			if k != after.Key {
				return cmp.Compare(after.Key, k)
			}
		}
	} else if after.HasKey {
		return 1
	}
	return cmp.Or(cmp.Compare(l.Store, after.Store), cmp.Compare(l.ID, after.ID))
}

// positions returns how many positions a walk of w covers at most.
func (w *walk) positions() int {
	n := 0
	for _, s := range w.segs {
		n += (s.end-s.next)*s.step + s.mTo - s.mFrom
	}
	return n
}

// sortMatchCost is what a match costs a sort of the matches (its sort
// value, and its share of the sort), and what each listing a merging walk
// returns costs it, in units of one step of a walk (a test of one
// position against the bitmap). It chooses between walking a query's
// order and sorting its matches (selectFirst).
const sortMatchCost = 24

// The strategies of a query with a bitmap of its matches: chosen by
// cost, or always one (for tests, which compare the two).
const (
	byCost = iota
	walkAlways
	sortAlways
	listAlways // walk, with every segment of a merge listed
)

// sortCheaper reports whether sorting total matches costs less than
// walking w until k of them are found, as estimated from their density.
func (w *walk) sortCheaper(total, k int) bool {
	switch w.e.cols.strategy {
	case walkAlways, listAlways:
		return false
	case sortAlways:
		return true
	}
	n := w.positions()
	steps := n // with the matches spread evenly, k of them lie within k*n/total
	if total > 0 {
		steps = min(n, (k*n)/total+k)
	}
	if len(w.segs) > 1 {
		steps += k * sortMatchCost
	}
	return total*sortMatchCost < steps
}

// selectFirst returns the first k of the listings set in match, in w's
// order, after the position after (nil: from the start).
func (w *walk) selectFirst(match []uint64, k int, after *Pos) []sortVal {
	var with, without []sortVal
	for _, s := range w.segs {
		pres, miss := w.gather(match, s.store, after)
		with = append(with, pres...)
		for _, j := range miss {
			without = append(without, sortVal{j: j})
		}
	}
	w.sortVals(with)
	// without is in index order: by store and id.
	out := append(with[:min(k, len(with))], without[:min(k-min(k, len(with)), len(without))]...)
	return out
}

// gather returns the listings of store st set in match that come after
// the position after (nil: all): those with a sort value unsorted, those
// without in index order (none when only those with a value are listed).
func (w *walk) gather(match []uint64, st views.Store, after *Pos) (pres []sortVal, miss []int32) {
	lo, hi := w.e.storeStart[st], w.e.storeStart[st+1]
	for wd := lo >> 6; wd < len(match) && wd<<6 < hi; wd++ {
		for b := match[wd]; b != 0; b &= b - 1 {
			j := int32(wd<<6 | bits.TrailingZeros64(b))
			if int(j) < lo || int(j) >= hi {
				continue
			}
			if _, ok := w.e.sortKey(int(j), w.sort); ok || byText(w.sort) {
				if v := w.e.val(j, w.sort); after == nil || w.follows(v, true, after) {
					pres = append(pres, v)
				}
			} else if !w.onlyWithValue && (after == nil || w.follows(sortVal{j: j}, false, after)) {
				miss = append(miss, j)
			}
		}
	}
	return pres, miss
}

// sortVals sorts listings with a sort value into w's order.
func (w *walk) sortVals(vs []sortVal) {
	slices.SortFunc(vs, func(a, b sortVal) int {
		if w.before(a, b) {
			return -1
		}
		return 1 // no two listings are equal: ties go by index
	})
}

// listSparse lists the segments of a merging walk whose stores have few
// matches in match for what walking them to k matches would cost, and
// empties those with none. Call it after seek: a listed segment keeps only
// the matches after the position after.
func (w *walk) listSparse(match []uint64, k int, after *Pos) {
	if len(w.segs) < 2 || w.e.cols.strategy == walkAlways {
		return
	}
	for i := range w.segs {
		s := &w.segs[i]
		lo, hi := w.e.storeStart[s.store], w.e.storeStart[s.store+1]
		count := countBits(match, lo, hi)
		n := (s.end-s.next)*s.step + s.mTo - s.mFrom
		steps := n
		if count > 0 {
			steps = min(n, (k*n)/count+k)
		}
		if count*sortMatchCost >= steps && w.e.cols.strategy != listAlways {
			continue
		}
		s.listed = true
		s.pres, s.miss = w.gather(match, s.store, after)
		w.sortVals(s.pres)
	}
}

// dropEmpty empties the segments of the stores where count finds no
// match (a query on flags alone knows them from the flag histograms).
func (w *walk) dropEmpty(count func(views.Store) int) {
	for i := range w.segs {
		if s := &w.segs[i]; count(s.store) == 0 {
			s.next, s.mFrom = s.end, s.mTo
		}
	}
}

// countBits counts the bits of bm in [lo, hi).
func countBits(bm []uint64, lo, hi int) int {
	n := 0
	for i := lo; i < hi; {
		wd := i >> 6
		if wd >= len(bm) {
			break
		}
		b := bm[wd] >> (i & 63)
		if end := (wd + 1) << 6; end > hi {
			b &= 1<<(hi-i) - 1
		}
		n += bits.OnesCount64(b)
		i = (wd + 1) << 6
	}
	return n
}

// follows reports whether the listing of v comes after the position
// after in w's order.
func (w *walk) follows(v sortVal, present bool, after *Pos) bool {
	l := &w.e.ls[v.j]
	if present != after.HasKey {
		return !present // the second part comes after the first
	}
	var c int
	if present {
		if byText(w.sort) {
			c = cmpText(after.Name, v.text)
		} else {
			c = cmp.Compare(after.Key, v.key)
		}
		if c != 0 {
			if w.asc {
				return c < 0
			}
			return c > 0
		}
	}
	c = cmp.Or(cmp.Compare(l.Store, after.Store), cmp.Compare(l.ID, after.ID))
	if w.asc && present {
		return c < 0
	}
	return c > 0
}
