package views

import (
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// SortNames are the sort keys of /api/extensions, in a fixed order; the
// v1 sorts map onto them (and onto the Sort* orders below).
var SortNames = []string{"installs", "name", "category", "rating", "ratingcount", "updated", "firstseen",
	"access", "growth1d", "growth7d", "growth30d", "growth365d", "growthpct1d", "growthpct7d", "growthpct30d",
	"growthpct365d", "ratinggrowth1d", "ratinggrowth7d", "ratinggrowthpct1d", "ratinggrowthpct7d"}

// SortIndex returns the index of a sort key in SortNames; an
// unknown key means installs (index 0), as the spec says.
func SortIndex(key string) int {
	if i := slices.Index(SortNames, key); i >= 0 {
		return i
	}
	return 0
}

// Sort orders that only the v1 API uses, kept after the legacy ones.
const (
	SortSize      = 20 // size: usage figure, or rating count on apple
	SortCreated   = 21 // store's creation date
	SortRankClimb = 22 // 7-day store-rank climb, among listings of at least RisingMinSize
	// SortRising is the 7-day growth percent among listings of at least
	// RisingMinSize (v1's growthpct7d); smaller listings have no value.
	SortRising = 23
	// SortStoreRank is the position within the listing's own store (rank
	// 1 of every store first, then every rank 2, ...): the order by size
	// across stores, whose sizes count different things.
	SortStoreRank = 24
	numSorts      = 25
)

// growthSort reports whether sort index i is a growth sort, which
// lists only listings that have the figure.
func growthSort(i int) bool { return i >= 8 && i < len(SortNames) }

// sortDef says how one legacy sort key reads a listing.
type sortDef struct {
	plain  string // a non-growth key, or ""
	window Window
	rating bool // rating-count growth rather than size growth
	pct    bool // the percent rather than the change
}

// sortDefs parallels SortNames.
var sortDefs = func() []sortDef {
	windows := map[string]Window{"1d": Window1d, "7d": Window7d, "30d": Window30d, "365d": Window365d}
	out := make([]sortDef, len(SortNames))
	for i, k := range SortNames {
		if i < 8 {
			out[i] = sortDef{plain: k}
			continue
		}
		rest, rating := strings.CutPrefix(k, "rating")
		rest = strings.TrimPrefix(rest, "growth")
		rest, pct := strings.CutPrefix(rest, "pct")
		out[i] = sortDef{window: windows[rest], rating: rating, pct: pct}
	}
	return out
}()

// sortKeyOf returns a listing's value for sort index i as an integer that
// orders like it (larger first), and whether the listing has one.
func sortKeyOf(l *Listing, i int) (int64, bool) {
	switch i {
	case SortSize:
		return l.Size()
	case SortCreated:
		return int64(l.Created), l.Created.Valid()
	case SortRankClimb, SortStoreRank:
		return 0, false // from the figures: see Figures.sortKey
	case SortRising:
		if size, ok := l.Size(); !ok || size < RisingMinSize(l.Store) {
			return 0, false
		}
		return sortKeyOf(l, SortIndex("growthpct7d"))
	}
	s := &sortDefs[i]
	switch s.plain {
	case "installs":
		return l.Usage()
	case "rating":
		r, ok := l.Rating()
		return int64(math.Round(RoundRating(r) * 100)), ok
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
	var c Change
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
	seg     [][NumStores + 1]int
	present [][NumStores]int
}

// buildSortOrders sorts the crawled listings once per sort key, in
// parallel, with a stable radix sort: listings are visited in store and id
// order, so ties stay in that order.
func (f *Figures) buildSortOrders() {
	ls := f.replica.listings
	n := numSorts
	f.orders = sortOrders{order: make([][]int32, n), seg: make([][NumStores + 1]int, n), present: make([][NumStores]int, n)}
	// At most one sort per core at once: each holds its keys and a radix
	// scratch (32 bytes a listing) while it runs, and 25 at once would
	// hold them all. Each core's buffers serve every sort it runs, so
	// the sorts leave no garbage but their orders: at 5M listings, 4 GB
	// less for the collector to chase while the heap holds two states.
	var wg sync.WaitGroup
	slots := make(chan *sortBufs, runtime.GOMAXPROCS(0))
	for range cap(slots) {
		slots <- &sortBufs{}
	}
	for i := range n {
		wg.Go(func() {
			buf := <-slots
			defer func() { slots <- buf }()
			with := buf.with[:0]
			without := buf.without[:0]
			defer func() { buf.with, buf.without = with[:0], without[:0] }()
			switch {
			case i < len(SortNames) && SortNames[i] == "name":
				with = f.nameKeys(with)
			case i < len(SortNames) && SortNames[i] == "category":
				with = f.categoryKeys(with)
			default:
				with = slices.Grow(with, len(ls)) // no regrowth: at most one allocation
				for j := range ls {
					if !ls[j].Crawled() {
						continue
					}
					if k, ok := f.sortKey(j, i); ok {
						with = append(with, keyed{key: descKey(k), idx: int32(j)})
					} else {
						without = append(without, int32(j))
					}
				}
			}
			buf.scratch = radixSortWith(with, buf.scratch)
			if i == SortIndex("name") {
				f.sortEqualNamePrefixes(with)
			}
			// Each store's segment: its listings with a value, in the
			// sort's order (a stable partition of the sorted whole),
			// then those without, which are in index order already.
			var seg [NumStores + 1]int
			var present [NumStores]int
			for _, r := range with {
				present[f.replica.storeOf(r.idx)]++
			}
			for _, j := range without {
				seg[f.replica.storeOf(j)+1]++
			}
			for s := range NumStores {
				seg[s+1] += seg[s] + present[s]
			}
			order := make([]int32, len(with)+len(without))
			next := [NumStores]int(seg[:NumStores])
			for _, r := range with {
				s := f.replica.storeOf(r.idx)
				order[next[s]] = r.idx
				next[s]++
			}
			for _, j := range without {
				s := f.replica.storeOf(j)
				order[next[s]] = j
				next[s]++
			}
			f.orders.order[i], f.orders.seg[i], f.orders.present[i] = order, seg, present
		})
	}
	wg.Wait()
}

// sortKey is sortKeyOf with the figures' own keys (the rank climb, the
// store rank).
func (f *Figures) sortKey(j, i int) (int64, bool) {
	switch i {
	case SortRankClimb:
		// As the climbers chart: below the floor, climbs are ties passed.
		l := &f.replica.listings[j]
		if size, ok := l.Size(); !ok || size < RisingMinSize(l.Store) {
			return 0, false
		}
		return int64(f.climb[j]), f.hasClimb[j]
	case SortStoreRank:
		return -int64(f.storeRank[j]), f.storeRank[j] != NoRank
	}
	return sortKeyOf(&f.replica.listings[j], i)
}

// categoryKeys keys crawled listings by their category's rank among the
// distinct category names, descending (Z to A), into out's memory.
func (f *Figures) categoryKeys(out []keyed) []keyed {
	ls := f.replica.listings
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
	out = slices.Grow(out[:0], len(ls))
	for j := range ls {
		if ls[j].Crawled() {
			out = append(out, keyed{key: names[ls[j].Category], idx: int32(j)})
		}
	}
	return out
}

// nameKeys keys crawled listings by the first 8 bytes of their name,
// descending, into out's memory; sortEqualNamePrefixes then orders names
// that share them.
func (f *Figures) nameKeys(out []keyed) []keyed {
	ls := f.replica.listings
	out = slices.Grow(out[:0], len(ls))
	for j := range ls {
		if ls[j].Crawled() {
			out = append(out, keyed{key: ^prefix8(ls[j].Name), idx: int32(j)})
		}
	}
	return out
}

// sortBufs are one core's buffers for the sorts it runs.
type sortBufs struct {
	with, scratch []keyed
	without       []int32
}

// sortEqualNamePrefixes orders each run of equal 8-byte name prefixes by
// the rest of the name, descending, ties by index: big runs by radix on
// the next 8 bytes, recursively; small ones by comparison.
func (f *Figures) sortEqualNamePrefixes(items []keyed) { f.sortNameRuns(items, 0) }

func (f *Figures) sortNameRuns(items []keyed, depth int) {
	ls := f.replica.listings
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && items[j].key == items[i].key {
			j++
		}
		run := items[i:j]
		i = j
		if len(run) < 2 {
			continue
		}
		if len(run) < 512 || depth >= 6 {
			from := 8 * (depth + 1)
			slices.SortFunc(run, func(a, b keyed) int {
				if c := strings.Compare(suffix(ls[b.idx].Name, from), suffix(ls[a.idx].Name, from)); c != 0 {
					return c
				}
				return int(a.idx - b.idx)
			})
			continue
		}
		from := 8 * (depth + 1)
		longer := false
		for k := range run {
			name := ls[run[k].idx].Name
			run[k].key = ^prefix8(suffix(name, from))
			longer = longer || len(name) > from
		}
		if !longer {
			slices.SortFunc(run, func(a, b keyed) int { return int(a.idx - b.idx) }) // equal names
			continue
		}
		radixSort(run)
		f.sortNameRuns(run, depth+1)
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
func prefix8(s string) uint64 {
	var k uint64
	for i := 0; i < 8; i++ {
		k <<= 8
		if i < len(s) {
			k |= uint64(s[i])
		}
	}
	return k
}
