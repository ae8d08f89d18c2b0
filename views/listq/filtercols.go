package listq

import (
	"cmp"
	"math"
	"slices"
	"sort"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/links"
)

// filterCols is a columnar copy of what /api/extensions filters on, one
// entry per replica listing: a query reads the 2-byte flag word of every
// candidate and only the columns its filters name, instead of whole
// listings. Category and permission filters start from posting lists.
type filterCols struct {
	links *links.Set // the links across stores, for the alsoIn filter

	meta        []uint16 // see the meta* bits
	usage       []int64  // -1 without a usage figure
	rating      []int16  // rating ×100, rounded; -1 unrated
	ratingCount []int64  // -1 without one
	updated     []views.Day
	firstSeen   []int64
	delisted    []int64
	version     []uint32           // 1 + ordinal among the distinct comparable versions; 0 not comparable
	versions    []string           // the distinct comparable versions, ascending (equal ones share an ordinal)
	versionOrd  []uint32           // ordinal of versions[i]
	category    map[string][]int32 // listings by category, ascending
	permission  map[string][]int32 // listings by permission, ascending
	has         map[Sort][]uint64  // growth sort -> bitmap of listings with the figure
	// catOrd is each listing's category as 1 + its number in catID (0:
	// none), so that a category is tested without reading the listing;
	// nil when there are more categories than it counts.
	catOrd     []uint16
	catID      map[string]uint16
	storeStart [views.NumStores + 1]int // listings of store s are [storeStart[s], storeStart[s+1])
	// metaCount counts the crawled listings by their flag word, and
	// hasMeta the same among those with a growth sort's figure: the total
	// of a query that filters on flags alone is a sum over them.
	metaCount *metaHist
	hasMeta   map[Sort]*metaHist
	// parallelMin is how many listings a scan covers before it splits
	// over the cores (scanParallelMin; tests lower it).
	parallelMin int
	// strategy chooses between walking the order and sorting the matches
	// of a query that has a bitmap of them: byCost, or one always (tests).
	strategy int
}

// metaHist counts listings by flag word.
type metaHist [1 << 15]int32

// count returns how many listings counted in h have a flag word w with
// w&mask == want and pass ok (nil: every one does).
func (h *metaHist) count(mask, want uint16, ok func(uint16) bool) int {
	total := 0
	for w, n := range h {
		if n != 0 && uint16(w)&mask == want && (ok == nil || ok(uint16(w))) {
			total += int(n)
		}
	}
	return total
}

const (
	metaStoreShift  = 0 // 3 bits
	metaKindShift   = 3 // 2 bits
	metaAccessShift = 5 // 3 bits
	metaMVShift     = 8 // 2 bits: 0 none, 1 = v2, 2 = v3
	metaCrawled     = 1 << 10
	metaDelisted    = 1 << 11
	metaFeatured    = 1 << 12
	metaHostAll     = 1 << 13
	metaRated       = 1 << 14
)

func (e *Engine) buildFilterCols(links *links.Set) {
	ls := e.ls
	n := len(ls)
	c := &e.cols
	c.links = links
	c.meta = make([]uint16, n)
	c.usage, c.ratingCount = make([]int64, n), make([]int64, n)
	c.rating, c.updated = make([]int16, n), make([]views.Day, n)
	c.firstSeen, c.delisted = make([]int64, n), make([]int64, n)
	c.version = make([]uint32, n)
	c.category, c.permission = map[string][]int32{}, map[string][]int32{}
	c.storeStart = e.storeStart
	c.parallelMin = scanParallelMin
	c.metaCount = new(metaHist)
	distinct := map[string]bool{}
	for i := range ls {
		l := &ls[i]
		if !l.Crawled() {
			continue
		}
		m := uint16(l.Store)<<metaStoreShift | uint16(l.Kind&3)<<metaKindShift | uint16(min(l.AccessLevel, 7))<<metaAccessShift | metaCrawled
		switch l.ManifestVersion {
		case 2:
			m |= 1 << metaMVShift
		case 3:
			m |= 2 << metaMVShift
		}
		if l.Delisted != 0 {
			m |= metaDelisted
		}
		if l.Featured {
			m |= metaFeatured
		}
		if slices.ContainsFunc(l.HostAccess, views.HostReachesAll) || slices.Contains(l.Permissions, "<all_urls>") {
			m |= metaHostAll
		}
		r, rated := l.Rating()
		c.rating[i] = -1
		if rated {
			m |= metaRated
			c.rating[i] = int16(math.Round(views.RoundRating(r) * 100))
		}
		c.meta[i] = m
		c.metaCount[m]++
		c.usage[i], c.ratingCount[i] = -1, -1
		if u, ok := l.Usage(); ok {
			c.usage[i] = u
		}
		if rc, ok := l.RatingCount(); ok {
			c.ratingCount[i] = rc
		}
		c.updated[i], c.firstSeen[i], c.delisted[i] = l.Updated, l.FirstSeen, l.Delisted
		if views.VersionComparable(l.Version) {
			distinct[l.Version] = true
		}
		c.category[l.Category] = append(c.category[l.Category], int32(i))
		for _, p := range l.Permissions {
			c.permission[p] = append(c.permission[p], int32(i))
		}
	}
	if len(c.category) < 1<<16 {
		c.catID = make(map[string]uint16, len(c.category))
		c.catOrd = make([]uint16, n)
		for name, list := range c.category {
			id := uint16(len(c.catID))
			c.catID[name] = id
			for _, i := range list {
				c.catOrd[i] = id + 1
			}
		}
	}
	for v := range distinct {
		c.versions = append(c.versions, v)
	}
	slices.SortFunc(c.versions, func(a, b string) int {
		x, _ := views.CompareVersions(a, b)
		return cmp.Or(x, cmp.Compare(a, b))
	})
	c.versionOrd = make([]uint32, len(c.versions))
	ord := map[string]uint32{}
	for i, v := range c.versions {
		if i > 0 {
			if x, _ := views.CompareVersions(c.versions[i-1], v); x == 0 {
				c.versionOrd[i] = c.versionOrd[i-1] // equal as versions: 1.0 and 1.0.0
			} else {
				c.versionOrd[i] = c.versionOrd[i-1] + 1
			}
		}
		ord[v] = c.versionOrd[i] + 1
	}
	for i := range ls {
		c.version[i] = ord[ls[i].Version]
	}
}

// buildHasValue sets, per growth sort, the listings with a value and
// their meta histogram, from the sort orders (after buildSortOrders and
// buildFilterCols).
func (e *Engine) buildHasValue() {
	c := &e.cols
	n := len(e.ls)
	c.has, c.hasMeta = map[Sort][]uint64{}, map[Sort]*metaHist{}
	for s := range Sort(len(SortNames)) {
		if !growthSort(s) {
			continue
		}
		bm := make([]uint64, (n+63)/64)
		h := new(metaHist)
		for st := range views.NumStores {
			from := e.orders.seg[s][st]
			for _, j := range e.orders.order[s][from : from+e.orders.present[s][st]] {
				bm[j>>6] |= 1 << (j & 63)
				h[c.meta[j]]++
			}
		}
		c.has[s], c.hasMeta[s] = bm, h
	}
}

// versionBound returns the smallest ordinal+1 of versions ≥ v (atLeast) or
// the largest of versions ≤ v (otherwise); 0 with ok false when none is.
func (c *filterCols) versionBound(v string, atLeast bool) (uint32, bool) {
	i := sort.Search(len(c.versions), func(i int) bool {
		x, _ := views.CompareVersions(c.versions[i], v)
		if atLeast {
			return x >= 0
		}
		return x > 0
	})
	if atLeast {
		if i == len(c.versions) {
			return 0, false
		}
		return c.versionOrd[i] + 1, true
	}
	if i == 0 {
		return 0, false
	}
	return c.versionOrd[i-1] + 1, true
}
