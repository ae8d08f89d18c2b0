package listq

import (
	"cmp"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/radix"
)

// sortKeyOf returns a listing's value for sort index i as an integer that
// orders like it (larger first), and whether the listing has one.
func sortKeyOf(l *views.Listing, i Sort) (int64, bool) {
	switch i {
	case SortSize:
		return l.Size()
	case SortCreated:
		return int64(l.Created), l.Created.Valid()
	case SortRankClimb, SortStoreRank:
		return 0, false // from the figures: see Engine.sortKey
	}
	if catalogue[i].Floor {
		if size, ok := l.Size(); !ok || size < views.RisingMinSize(l.Store) {
			return 0, false
		}
	}
	s := &catalogue[i].def
	switch s.plain {
	case "installs":
		return l.Usage()
	case "rating":
		r, ok := l.Rating()
		return int64(math.Round(views.RoundRating(r) * 100)), ok
	case "ratingcount":
		if _, rated := l.Rating(); !rated {
			return 0, false
		}
		return l.RatingCount()
	case "updated":
		return int64(l.Updated), l.Updated.Valid()
	case "firstseen":
		return l.FirstSeen, true
	case "access":
		return int64(l.AccessLevel), l.AccessLevel > 0
	case "name", "category":
		return 0, false // sorted as strings
	}
	var c views.Change
	var ok bool
	if s.rating {
		c, ok = l.RatingGrowth(s.window)
	} else {
		c, ok = l.SizeGrowth(s.window)
	}
	switch {
	case !ok:
		return 0, false
	case s.pct && math.IsNaN(c.Percent):
		return 0, false
	case s.pct:
		return int64(math.Round(c.Percent * 10000)), true
	}
	return c.Delta, true
}

// sortOrders holds, for every sort, the crawled listings of each store in
// descending order, one store after another: store s's listings are
// order[i][seg[i][s]:seg[i][s+1]], those with a value first (ties by id),
// then those without (by id), and present[i][s] counts the first part.
// A query of one store walks its segment alone; a query of every store
// merges the segments' first parts (see walk.go). Kept store by store,
// the orders take no more memory than one order of every listing.
type sortOrders struct {
	order   [][]int32
	seg     [][views.NumStores + 1]int
	present [][views.NumStores]int
}

// buildSortOrders sorts the crawled listings once per sort key, store by
// store, a few sorts at once on each core. Every sort orders the same
// listings, so the stores' segments are the same in every order.
//
// Reading the listings is most of the work (each sort reads a cache line
// or two of every listing), so one pass over a store keys it for every
// sort of a group. Within a store, a listing's key and its index in the
// store are packed into one word, the key above the index: a stable radix
// sort of the key's bits alone then leaves ties in index order, and moves
// half the bytes of a key and index kept apart.
func (e *Engine) buildSortOrders() {
	ls := e.ls
	e.orders = sortOrders{order: make([][]int32, numSorts), seg: make([][views.NumStores + 1]int, numSorts), present: make([][views.NumStores]int, numSorts)}
	var seg [views.NumStores + 1]int
	largest := 0
	for s := range views.NumStores {
		lo, hi := e.storeStart[s], e.storeStart[s+1]
		crawled := 0
		for j := lo; j < hi; j++ {
			if ls[j].Crawled() {
				crawled++
			}
		}
		seg[s+1] = seg[s] + crawled
		largest = max(largest, crawled)
	}
	// One group per core at once, each with its core's buffers (8 bytes
	// a listing of the largest store for each sort of a group, and as
	// many for a scratch), which serve every group it runs: the sorts
	// leave no garbage but their orders.
	var wg sync.WaitGroup
	slots := make(chan *sortBufs, runtime.GOMAXPROCS(0))
	for range cap(slots) {
		b := &sortBufs{scratch: make([]uint64, 0, largest)}
		for g := range b.keys {
			b.keys[g] = make([]uint64, 0, largest)
		}
		slots <- b
	}
	nul := make([]bool, (numSorts+sortGroup-1)/sortGroup) // per group: a name held a NUL byte
	for first := Sort(0); first < numSorts; first += sortGroup {
		group := make([]Sort, 0, sortGroup)
		for i := first; i < min(first+sortGroup, numSorts); i++ {
			group = append(group, i)
		}
		wg.Go(func() {
			buf := <-slots
			defer func() { slots <- buf }()
			for _, i := range group {
				e.orders.order[i], e.orders.seg[i] = make([]int32, seg[views.NumStores]), seg
			}
			keys := make([]func(j int) (uint64, bool), len(group))
			for g, i := range group {
				keys[g] = e.sortKeyFunc(i)
			}
			for s := range views.NumStores {
				if e.sortStore(buf, views.Store(s), group, keys) {
					nul[first/sortGroup] = true
				}
			}
		})
	}
	wg.Wait()
	e.nulNames = slices.Contains(nul, true)
}

// sortGroup is how many sorts one pass over a store keys.
const sortGroup = 3

// sortKeyFunc returns how sort i keys a listing: a key whose ascending
// order is the sort's, and whether the listing has one (nil for names,
// which sortStore keys itself).
func (e *Engine) sortKeyFunc(i Sort) func(j int) (uint64, bool) {
	switch {
	case i == SortName:
		return nil
	case i == SortCategory:
		ls := e.ls
		rank := e.categoryRanks()
		return func(j int) (uint64, bool) { return rank[ls[j].Category], true }
	}
	return func(j int) (uint64, bool) {
		k, ok := e.sortKey(j, i)
		return radix.DescKey(k), ok
	}
}

// sortStore writes store s's crawled listings into the segment of each
// sort of group, in its order: those with a key first (ascending key,
// ties by index), then those without (by index), and sets how many have
// a key. keys parallels group. It reports whether a name it keyed held
// a NUL byte (Engine.nulNames).
func (e *Engine) sortStore(buf *sortBufs, s views.Store, group []Sort, keys []func(j int) (uint64, bool)) (nul bool) {
	ls := e.ls
	lo, hi := e.storeStart[s], e.storeStart[s+1]
	idxBits := uint(bits.Len(uint(hi - lo)))
	nameBytes := int(64-idxBits) / 8 // of a name's prefix that fit above the index
	// A listing with a key goes to the front of a sort's segment as it is
	// met, its key to buf.keys; one without, to the back, last first.
	var outs [sortGroup][]int32
	var back [sortGroup]int
	var minK, maxK [sortGroup]uint64
	for g, i := range group {
		seg := e.orders.seg[i]
		outs[g] = e.orders.order[i][seg[s]:seg[s+1]]
		back[g], minK[g], maxK[g] = len(outs[g]), math.MaxUint64, 0
		buf.keys[g] = buf.keys[g][:0]
	}
	for j := lo; j < hi; j++ {
		if !ls[j].Crawled() {
			continue
		}
		for g, key := range keys {
			var k uint64
			ok := true
			if key == nil {
				k = ^prefixBytes(ls[j].Name, nameBytes) & (1<<(8*nameBytes) - 1)
				nul = nul || strings.IndexByte(ls[j].Name, 0) >= 0
			} else {
				k, ok = key(j)
			}
			if !ok {
				back[g]--
				outs[g][back[g]] = int32(j)
				continue
			}
			outs[g][len(buf.keys[g])] = int32(j)
			buf.keys[g] = append(buf.keys[g], k)
			minK[g], maxK[g] = min(minK[g], k), max(maxK[g], k)
		}
	}
	for g, i := range group {
		out, keys := outs[g], buf.keys[g]
		m := len(keys)
		e.orders.present[i][s] = m
		slices.Reverse(out[m:])
		byName := i == SortName
		if byName {
			minK[g] = 0 // the name's bytes are the key as they are
		}
		if spanBits := uint(bits.Len64(maxK[g] - minK[g])); m > 0 && idxBits+spanBits <= 64 {
			for r, k := range keys {
				keys[r] = (k-minK[g])<<idxBits | uint64(int(out[r])-lo)
			}
			buf.scratch = radix.SortBits(keys, buf.scratch, idxBits, idxBits+spanBits)
			if byName {
				e.sortNameRuns64(keys, idxBits, lo, nameBytes)
			}
			mask := uint64(1)<<idxBits - 1
			for r, k := range keys {
				out[r] = int32(int(k&mask) + lo)
			}
		} else if m > 0 {
			// A key too wide to share a word with the index (a growth
			// percent of billions): sorted beside it.
			items := make([]radix.Item, m)
			for r, k := range keys {
				items[r] = radix.Item{Key: k, Index: out[r]}
			}
			radix.Sort(items)
			for r, it := range items {
				out[r] = it.Index
			}
		}
	}
	return nul
}

// sortNameRuns64 orders each run of packed items (a name's first
// nameBytes bytes, descending, above its index less lo) that share those
// bytes by the rest of the name, descending, ties by index.
func (e *Engine) sortNameRuns64(items []uint64, idxBits uint, lo, nameBytes int) {
	ls := e.ls
	mask := uint64(1)<<idxBits - 1
	name := func(it uint64) string { return ls[int(it&mask)+lo].Name }
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j]>>idxBits == items[i]>>idxBits {
			j++
		}
		run := items[i:j]
		i = j
		switch {
		case len(run) < 2:
		case len(run) < 32:
			slices.SortFunc(run, func(a, b uint64) int {
				if c := strings.Compare(suffix(name(b), nameBytes), suffix(name(a), nameBytes)); c != 0 {
					return c
				}
				return cmp.Compare(a, b) // the same key above: by index
			})
		default:
			itemRun := make([]radix.Item, len(run))
			for r, it := range run {
				itemRun[r] = radix.Item{Key: ^prefix8(suffix(name(it), nameBytes)), Index: int32(int(it&mask) + lo)}
			}
			if len(itemRun) < 1<<12 {
				// A radix pass clears 2^16 counters: more than a
				// comparison sort of a few thousand.
				slices.SortFunc(itemRun, func(a, b radix.Item) int { return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Index, b.Index)) })
			} else {
				radix.Sort(itemRun)
			}
			e.sortNameRuns(itemRun, nameBytes, 0)
			for r, it := range itemRun {
				run[r] = run[r]&^mask | uint64(int(it.Index)-lo)
			}
		}
	}
}

// sortKey is sortKeyOf with the figures' own keys (the rank climb, the
// store rank).
func (e *Engine) sortKey(j int, i Sort) (int64, bool) {
	switch i {
	case SortRankClimb:
		// As the climbers chart: below the floor, climbs are ties passed.
		l := &e.ls[j]
		if size, ok := l.Size(); !ok || size < views.RisingMinSize(l.Store) {
			return 0, false
		}
		return int64(e.ranks.Climb[j]), e.ranks.HasClimb[j]
	case SortStoreRank:
		return -int64(e.ranks.Store[j]), e.ranks.Store[j] != views.NoRank
	}
	return sortKeyOf(&e.ls[j], i)
}

// categoryRanks maps each category name to its rank among the distinct
// names, descending (Z to A first).
func (e *Engine) categoryRanks() map[string]uint64 {
	ls := e.ls
	names := map[string]uint64{}
	for j := range ls {
		names[ls[j].Category] = 0
	}
	sorted := make([]string, 0, len(names))
	for n := range names {
		sorted = append(sorted, n)
	}
	slices.Sort(sorted)
	for r, n := range sorted {
		names[n] = uint64(len(sorted) - r) // descending
	}
	return names
}

// sortBufs are one core's buffers for the sorts it runs.
type sortBufs struct {
	keys    [sortGroup][]uint64
	scratch []uint64
}

// sortNameRuns orders each run of items that share a key, the 8 bytes of
// their names from from (descending), by the rest of the name,
// descending, ties by index: big runs by radix on the next 8 bytes,
// recursively (depth counts how deep); small ones by comparison.
func (e *Engine) sortNameRuns(items []radix.Item, from, depth int) {
	ls := e.ls
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].Key == items[i].Key {
			j++
		}
		run := items[i:j]
		i = j
		if len(run) < 2 {
			continue
		}
		next := from + 8
		if len(run) < 512 || depth >= 6 {
			slices.SortFunc(run, func(a, b radix.Item) int {
				if c := strings.Compare(suffix(ls[b.Index].Name, next), suffix(ls[a.Index].Name, next)); c != 0 {
					return c
				}
				return int(a.Index - b.Index)
			})
			continue
		}
		longer := false
		for k := range run {
			name := ls[run[k].Index].Name
			run[k].Key = ^prefix8(suffix(name, next))
			longer = longer || len(name) > next
		}
		if !longer {
			slices.SortFunc(run, func(a, b radix.Item) int { return int(a.Index - b.Index) }) // equal names
			continue
		}
		radix.Sort(run)
		e.sortNameRuns(run, next, depth+1)
	}
}

func suffix(s string, from int) string {
	if from >= len(s) {
		return ""
	}
	return s[from:]
}

// prefix8 returns the first 8 bytes of s as a big-endian number, so that
// numbers order like the strings' prefixes.
func prefix8(s string) uint64 { return prefixBytes(s, 8) }

// prefixBytes returns the first n (at most 8) bytes of s as a big-endian
// number, so that numbers order like the strings' prefixes.
func prefixBytes(s string, n int) uint64 {
	var k uint64
	for i := 0; i < n; i++ {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}
