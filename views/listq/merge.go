package listq

import (
	"cmp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/links"
	"github.com/edge-stats/edge/views/radix"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/textindex"
)

// BuildFrom builds the engine of r as Build does, from prev, the engine
// of the replica r was made from by a delta that did a (replica.Applied).
// Its sort orders are prev's with the listings the delta dropped taken
// out and those it added merged in at their places, instead of sorts of
// every listing: a fleet's follower applies a refresh's few changed
// listings in a thousand, and the sorts were most of its build. The
// result is the same engine Build gives, order for order.
//
// It needs what a refresh keeps: every listing of prev's replica the
// delta did not drop has the same sort keys in r, and the same store
// rank or none (package figures checks the replicas' windows before it
// asks). The 7-day climb moves with every other listing's rank, so its
// order is sorted whole, as is the name order while a name holds a NUL
// byte (the sort of names compares them zero-padded).
func BuildFrom(prev *Engine, r *replica.Replica, ranks Ranks, links *links.Set, topics Topics, a replica.Applied) *Engine {
	e := &Engine{replica: r, ls: r.All(), ranks: ranks, topics: topics}
	e.recent = textindex.NewRecent(max(8*len(e.ls), 1<<20)) // as Build's
	for _, s := range views.Stores {
		e.storeStart[s], e.storeStart[s+1] = r.StoreRange(s)
	}
	var cols sync.WaitGroup
	cols.Go(func() { e.buildFilterCols(links) })
	if e.merged = e.mergeSortOrders(prev, a); !e.merged {
		e.buildSortOrders()
	}
	cols.Wait()
	e.buildHasValue()
	return e
}

// Merged reports whether the engine's sort orders were merged from the
// engine before (BuildFrom) rather than sorted whole.
func (e *Engine) Merged() bool { return e.merged }

// mergeSortOrders sets e's sort orders from prev's and a; it returns
// false when a does not fit prev and e, and the caller then sorts them
// whole (buildSortOrders sets every order and nulNames again).
func (e *Engine) mergeSortOrders(prev *Engine, a replica.Applied) bool {
	mv, ok := mergeMap(len(prev.ls), len(e.ls), a)
	if !ok {
		return false
	}
	// Each store's crawled listings: prev's, less those dropped, plus
	// those added.
	var seg [views.NumStores + 1]int
	var count [views.NumStores]int
	largest := 0
	for s := range views.NumStores {
		count[s] = prev.orders.seg[0][s+1] - prev.orders.seg[0][s]
	}
	for _, o := range a.Dropped {
		if l := &prev.ls[o]; l.Crawled() {
			count[l.Store]--
		}
	}
	e.nulNames = prev.nulNames
	for _, j := range a.Added {
		l := &e.ls[j]
		if l.Crawled() {
			count[l.Store]++
		}
		e.nulNames = e.nulNames || strings.IndexByte(l.Name, 0) >= 0
	}
	for s := range views.NumStores {
		if count[s] < 0 {
			return false
		}
		seg[s+1] = seg[s] + count[s]
		largest = max(largest, count[s])
	}
	e.orders = sortOrders{order: make([][]int32, numSorts), seg: make([][views.NumStores + 1]int, numSorts), present: make([][views.NumStores]int, numSorts)}
	var (
		wg     sync.WaitGroup
		failed bool
		mu     sync.Mutex
		next   = make(chan Sort, numSorts)
	)
	for i := range numSorts {
		e.orders.order[i], e.orders.seg[i] = make([]int32, seg[views.NumStores]), seg
		next <- i
	}
	close(next)
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			var buf *sortBufs // for the sorts sorted whole, made once needed
			for i := range next {
				if i == SortRankClimb || (i == SortName && e.nulNames) {
					if buf == nil {
						buf = &sortBufs{scratch: make([]uint64, 0, largest)}
						buf.keys[0] = make([]uint64, 0, largest)
					}
					keys := []func(j int) (uint64, bool){e.sortKeyFunc(i)}
					for s := range views.NumStores {
						e.sortStore(buf, views.Store(s), []Sort{i}, keys)
					}
					continue
				}
				for s := range views.NumStores {
					if !e.mergeStore(prev, i, views.Store(s), mv, a.Added) {
						mu.Lock()
						failed = true
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	return !failed
}

// mergeMap returns, for each listing of prev's replica (oldN listings),
// where it sits among the new replica's newN in doubled units: 2j for a
// listing kept at index j, and for one dropped 2j-1, where j is the index
// of the next listing kept (newN when none is). The values rise with the
// old index, so that an old order's (key, value) pairs stay sorted and a
// binary search can place a new listing (2j) among them.
func mergeMap(oldN, newN int, a replica.Applied) ([]int32, bool) {
	if oldN-len(a.Dropped) != newN-len(a.Added) || newN >= 1<<30 {
		return nil, false
	}
	for _, idx := range []struct {
		ix []int32
		n  int
	}{{a.Dropped, oldN}, {a.Added, newN}} {
		for k, v := range idx.ix {
			if v < 0 || int(v) >= idx.n || (k > 0 && v <= idx.ix[k-1]) {
				return nil, false
			}
		}
	}
	mv := make([]int32, oldN)
	dropped, added := a.Dropped, a.Added
	j := int32(0)
	for o := range int32(oldN) {
		if len(dropped) > 0 && dropped[0] == o {
			dropped = dropped[1:]
			mv[o] = -1
			continue
		}
		for len(added) > 0 && added[0] == j {
			added, j = added[1:], j+1
		}
		mv[o] = 2 * j
		j++
	}
	after := int32(2 * newN)
	for o := oldN - 1; o >= 0; o-- {
		if mv[o] < 0 {
			mv[o] = after - 1
		} else {
			after = mv[o]
		}
	}
	return mv, true
}

// mergeStore writes store s's segment of sort i: prev's, less the
// listings dropped (mv odd), the others at their new indexes, with the
// added listings of s (in added, ascending) merged in at their places.
func (e *Engine) mergeStore(prev *Engine, i Sort, s views.Store, mv, added []int32) bool {
	lo, hi := e.storeStart[s], e.storeStart[s+1]
	from, _ := slices.BinarySearch(added, int32(lo))
	to, _ := slices.BinarySearch(added, int32(hi))
	ins := added[from:to]
	old := prev.orders.order[i][prev.orders.seg[i][s]:prev.orders.seg[i][s+1]]
	oldPresent := prev.orders.present[i][s]
	out := e.orders.order[i][e.orders.seg[i][s]:e.orders.seg[i][s+1]]
	switch i {
	case SortName:
		name := func(ls []views.Listing) func(j int) (string, bool) {
			return func(j int) (string, bool) { return ls[j].Name, true }
		}
		return mergeKeys(e, i, s, out, old, oldPresent, mv, ins, name(prev.ls), name(e.ls), descString)
	case SortCategory:
		// Category ranks order as the names do (categoryRanks).
		cat := func(ls []views.Listing) func(j int) (string, bool) {
			return func(j int) (string, bool) { return ls[j].Category, true }
		}
		return mergeKeys(e, i, s, out, old, oldPresent, mv, ins, cat(prev.ls), cat(e.ls), descString)
	case SortStoreRank:
		// Rank 1 first is the largest size first, ties sharing a rank
		// (competition ranks): ordered by size, not by the ranks, which
		// move as listings above change.
		rank := func(en *Engine) func(j int) (uint64, bool) {
			return func(j int) (uint64, bool) {
				if en.ranks.Store[j] == views.NoRank {
					return 0, false
				}
				size, _ := en.ls[j].Size()
				return radix.DescKey(size), true
			}
		}
		return mergeKeys(e, i, s, out, old, oldPresent, mv, ins, rank(prev), rank(e), cmp.Compare[uint64])
	}
	return mergeKeys(e, i, s, out, old, oldPresent, mv, ins, prev.sortKeyFunc(i), e.sortKeyFunc(i), cmp.Compare[uint64])
}

func descString(a, b string) int { return strings.Compare(b, a) }

// keyed is one listing of a merge: its key, whether it has one, and its
// place in mergeMap's doubled units.
type keyed[K any] struct {
	key   K
	has   bool
	place int32
}

// compareKeyed orders as a sort's segment does: listings with a key
// first, by key, then by place (the index); then those without, by
// place.
func compareKeyed[K any](a, b keyed[K], compare func(a, b K) int) int {
	if a.has != b.has {
		if a.has {
			return -1
		}
		return 1
	}
	if a.has {
		if c := compare(a.key, b.key); c != 0 {
			return c
		}
	}
	return cmp.Compare(a.place, b.place)
}

// mergeKeys is mergeStore for keys of type K ordered by compare, read by
// oldKey from prev's listings and by newKey from e's; it sets e's count
// of store s's listings with a key for sort i.
func mergeKeys[K any](e *Engine, i Sort, s views.Store, out, old []int32, oldPresent int, mv, ins []int32,
	oldKey, newKey func(j int) (K, bool), compare func(a, b K) int) bool {
	items := make([]keyed[K], 0, len(ins))
	for _, j := range ins {
		if !e.ls[j].Crawled() {
			continue
		}
		k, ok := newKey(int(j))
		items = append(items, keyed[K]{key: k, has: ok, place: 2 * j})
	}
	slices.SortFunc(items, func(a, b keyed[K]) int { return compareKeyed(a, b, compare) })
	// Each added listing's place among the old order: the block of
	// fences (every step-th listing of the old order, about one a listing
	// added) it falls in, walked in order, then a binary search within
	// the block. A key is read for a dozen listings of the old order a
	// listing added, not for all; a binary search of the whole order
	// read twice as many.
	after := func(p int, it keyed[K]) bool {
		o := old[p]
		k, ok := oldKey(int(o))
		return compareKeyed(keyed[K]{key: k, has: ok, place: mv[o]}, it, compare) > 0
	}
	step := 8
	for step < 1<<12 && step*(len(items)+1) < len(old) {
		step *= 2
	}
	at := make([]int, len(items))
	lo := 0 // the first place an item can take: no listing before it is after the item
	for n, it := range items {
		for lo+step < len(old) && !after(lo+step, it) {
			lo += step
		}
		hi := min(lo+step+1, len(old))
		lo += sort.Search(hi-lo, func(x int) bool { return after(lo+x, it) })
		at[n] = lo
	}
	w, n, present := 0, 0, 0
	put := func(j int32, has bool) bool {
		if w == len(out) {
			return false
		}
		out[w] = j
		w++
		if has {
			present++
		}
		return true
	}
	for p, o := range old {
		for n < len(items) && at[n] == p {
			if !put(items[n].place/2, items[n].has) {
				return false
			}
			n++
		}
		if v := mv[o]; v&1 == 0 && !put(v/2, p < oldPresent) {
			return false
		}
	}
	for ; n < len(items); n++ {
		if !put(items[n].place/2, items[n].has) {
			return false
		}
	}
	e.orders.present[i][s] = present
	return w == len(out)
}
