package listq

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/links"
	"github.com/edge-stats/edge/views/textindex"
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

// plan is a query prepared against the columns.
type queryPlan struct {
	q                      *Query
	c                      *filterCols
	wantMeta, maskMeta     uint16
	delistedOnly, anyState bool
	minVer, maxVer         uint32
	none                   bool // no listing can match
	rMin, rMax             int16
	dayLo, dayHi           int64 // firstSeen bounds, unix
	delLo, delHi           int64
	has                    []uint64
	topic                  *[views.NumStores][]int32
	text                   []uint64 // listings whose text matches q.Q; nil: test each
	partial                bool     // the text search stopped at q.Deadline
	topicListed            bool     // the candidates are the topic's listings: no need to test the topic
	catListed              bool     // the candidates are the category's listings: no need to test the category
	cat                    uint16   // the category's catOrd, when q.Category is set and catOrd is kept
}

func (c *filterCols) plan(q *Query) *queryPlan {
	p := &queryPlan{q: q, c: c, maskMeta: metaCrawled, wantMeta: metaCrawled}
	p.delistedOnly = q.DelistedOnly || q.DelistedAfter != nil || q.DelistedBefore != nil
	switch {
	case p.delistedOnly:
		p.maskMeta, p.wantMeta = p.maskMeta|metaDelisted, p.wantMeta|metaDelisted
	case !q.IncludeDelisted:
		p.maskMeta |= metaDelisted
	}
	if q.Store != nil {
		p.maskMeta |= 7 << metaStoreShift
		p.wantMeta |= uint16(*q.Store) << metaStoreShift
	}
	if q.Kind != nil {
		if *q.Kind > 3 {
			p.none = true
		}
		p.maskMeta |= 3 << metaKindShift
		p.wantMeta |= uint16(*q.Kind&3) << metaKindShift
	}
	if q.Featured != nil {
		p.maskMeta |= metaFeatured
		if *q.Featured {
			p.wantMeta |= metaFeatured
		}
	}
	if q.Rated != nil {
		p.maskMeta |= metaRated
		if *q.Rated {
			p.wantMeta |= metaRated
		}
	}
	if q.HostAccessAll {
		p.maskMeta |= metaHostAll
		p.wantMeta |= metaHostAll
	}
	if q.ManifestVersion != nil {
		p.maskMeta |= 3 << metaMVShift
		switch *q.ManifestVersion {
		case 2:
			p.wantMeta |= 1 << metaMVShift
		case 3:
			p.wantMeta |= 2 << metaMVShift
		default:
			p.none = true
		}
	}
	if q.MinVersion != nil {
		var ok bool
		if p.minVer, ok = c.versionBound(*q.MinVersion, true); !ok {
			p.none = true
		}
	}
	if q.MaxVersion != nil {
		var ok bool
		if p.maxVer, ok = c.versionBound(*q.MaxVersion, false); !ok {
			p.none = true
		}
	}
	p.rMin, p.rMax = -1, math.MaxInt16
	if q.MinRating != nil {
		p.rMin = int16(math.Ceil(*q.MinRating*100 - 1e-9))
	}
	if q.MaxRating != nil {
		p.rMax = int16(math.Floor(*q.MaxRating*100 + 1e-9))
	}
	p.dayLo, p.dayHi = math.MinInt64, math.MaxInt64
	if q.FirstSeenAfter != nil {
		p.dayLo = q.FirstSeenAfter.Time().Unix()
	}
	if q.FirstSeenBefore != nil {
		p.dayHi = (*q.FirstSeenBefore + 1).Time().Unix()
	}
	p.delLo, p.delHi = math.MinInt64, math.MaxInt64
	if q.DelistedAfter != nil {
		p.delLo = q.DelistedAfter.Time().Unix()
	}
	if q.DelistedBefore != nil {
		p.delHi = (*q.DelistedBefore + 1).Time().Unix()
	}
	if q.OnlyWithValue && growthSort(q.Sort) {
		p.has = c.has[q.Sort]
	}
	if q.Category != nil && c.catOrd != nil {
		id, ok := c.catID[*q.Category]
		if !ok {
			p.none = true // no listing has it
		}
		p.cat = id + 1
	}
	return p
}

// flagsOnly reports whether p's query filters on nothing but the flag
// word (store, kind, state, featured, rated, host access, manifest
// version, access level) and a growth sort's figure: its total is then a
// sum over metaCount or hasMeta, and its matches are tested one by one as
// a walk meets them.
func (p *queryPlan) flagsOnly() bool {
	q := p.q
	return q.Q == "" && q.Category == nil && q.Permission == nil && q.Topic == nil && q.AlsoIn == nil &&
		q.MinInstalls == nil && q.MaxInstalls == nil && q.MinRating == nil && q.MaxRating == nil &&
		q.MinRatingCount == nil && q.MaxRatingCount == nil && p.minVer == 0 && p.maxVer == 0 &&
		q.UpdatedAfter == nil && q.UpdatedBefore == nil && q.FirstSeenAfter == nil && q.FirstSeenBefore == nil &&
		q.DelistedAfter == nil && q.DelistedBefore == nil && q.MinSize == nil && q.MaxSize == nil
}

// flagsTotal returns the number of listings that match a query of which
// flagsOnly holds.
func (p *queryPlan) flagsTotal() int {
	h := p.c.metaCount
	if p.has != nil {
		h = p.c.hasMeta[p.q.Sort]
	}
	var ok func(uint16) bool
	if al := p.q.MinAccessLevel; al != nil {
		ok = func(w uint16) bool {
			l := uint8(w>>metaAccessShift) & 7
			return l != 0 && l >= *al
		}
	}
	return h.count(p.maskMeta, p.wantMeta, ok)
}

// flagsTotalIn is flagsTotal within store s.
func (p *queryPlan) flagsTotalIn(s views.Store) int {
	if p.maskMeta&(7<<metaStoreShift) != 0 && views.Store(p.wantMeta>>metaStoreShift&7) != s {
		return 0
	}
	q := *p
	q.maskMeta |= 7 << metaStoreShift
	q.wantMeta = q.wantMeta&^(7<<metaStoreShift) | uint16(s)<<metaStoreShift
	return q.flagsTotal()
}

// storeRange returns the part of list (ascending listing indexes) that
// lies in the query's store, or list itself without a store filter.
func (p *queryPlan) storeRange(list []int32) []int32 {
	if p.q.Store == nil {
		return list
	}
	lo, hi := int32(p.c.storeStart[*p.q.Store]), int32(p.c.storeStart[*p.q.Store+1])
	i, _ := slices.BinarySearch(list, lo)
	j, _ := slices.BinarySearch(list[i:], hi)
	return list[i : i+j]
}

// candidates returns the listing indexes a query must test: a posting list
// when it filters by category or permission (the shorter), else nil for
// the scan range.
func (p *queryPlan) candidates() ([]int32, bool) {
	var list []int32
	found := false
	if p.q.Topic != nil {
		found, p.topicListed = true, true
		switch {
		case p.topic == nil:
		case p.q.Store != nil:
			list = p.topic[*p.q.Store]
		default:
			for _, l := range p.topic {
				list = append(list, l...)
			}
		}
	}
	if p.q.Category != nil {
		if cl := p.storeRange(p.c.category[*p.q.Category]); !found || len(cl) < len(list) {
			list, p.topicListed, p.catListed = cl, false, true
		}
		found = true
	}
	if p.q.Permission != nil {
		pl := p.storeRange(p.c.permission[*p.q.Permission])
		if !found || len(pl) < len(list) {
			list, p.topicListed, p.catListed = pl, false, false
		}
		found = true
	}
	if p.q.AlsoIn != nil {
		// The linked listings: match tests the store they link to.
		if ll := p.storeRange(p.c.links.Linked()); !found || len(ll) < len(list) {
			list, p.topicListed, p.catListed = ll, false, false
		}
		found = true
	}
	return list, found
}

// match tests listing i against every filter, reading only the columns the
// query needs and the listing itself only for text and the second of a
// category and permission pair.
func (p *queryPlan) match(ls []views.Listing, i int) bool {
	c, q := p.c, p.q
	if c.meta[i]&p.maskMeta != p.wantMeta {
		return false
	}
	if q.MinAccessLevel != nil {
		if al := uint8(c.meta[i]>>metaAccessShift) & 7; al == 0 || al < *q.MinAccessLevel {
			return false
		}
	}
	if q.MinSize != nil || q.MaxSize != nil {
		sz := c.usage[i]
		if views.Store(c.meta[i]>>metaStoreShift&7) == views.Apple {
			sz = c.ratingCount[i]
		}
		if sz < 0 || (q.MinSize != nil && sz < *q.MinSize) || (q.MaxSize != nil && sz > *q.MaxSize) {
			return false
		}
	}
	if q.Topic != nil && !p.topicListed && !slices.Contains(ls[i].Topics, *q.Topic) {
		return false
	}
	if q.AlsoIn != nil && !c.links.To(ls, i, *q.AlsoIn) {
		return false
	}
	if q.MinInstalls != nil || q.MaxInstalls != nil {
		u := c.usage[i]
		if u < 0 || (q.MinInstalls != nil && float64(u) < *q.MinInstalls) || (q.MaxInstalls != nil && float64(u) > *q.MaxInstalls) {
			return false
		}
	}
	if q.MinRating != nil || q.MaxRating != nil {
		if r := c.rating[i]; r < 0 || r < p.rMin || r > p.rMax {
			return false
		}
	}
	if q.MinRatingCount != nil || q.MaxRatingCount != nil {
		n := c.ratingCount[i]
		if c.rating[i] < 0 || n < 0 || (q.MinRatingCount != nil && n < *q.MinRatingCount) || (q.MaxRatingCount != nil && n > *q.MaxRatingCount) {
			return false
		}
	}
	if p.minVer != 0 || p.maxVer != 0 {
		v := c.version[i]
		if v == 0 || (p.minVer != 0 && v < p.minVer) || (p.maxVer != 0 && v > p.maxVer) {
			return false
		}
	}
	if q.UpdatedAfter != nil || q.UpdatedBefore != nil {
		u := c.updated[i]
		if !u.Valid() || (q.UpdatedAfter != nil && u < *q.UpdatedAfter) || (q.UpdatedBefore != nil && u > *q.UpdatedBefore) {
			return false
		}
	}
	if q.FirstSeenAfter != nil || q.FirstSeenBefore != nil {
		if fs := c.firstSeen[i]; fs < p.dayLo || fs >= p.dayHi {
			return false
		}
	}
	if p.delistedOnly {
		if d := c.delisted[i]; d < p.delLo || d >= p.delHi {
			return false
		}
	}
	if p.has != nil && p.has[i>>6]&(1<<(i&63)) == 0 {
		return false
	}
	if q.Category != nil && !p.catListed && p.cat != 0 && c.catOrd[i] != p.cat {
		return false
	}
	l := &ls[i]
	if q.Category != nil && !p.catListed && p.cat == 0 && l.Category != *q.Category {
		return false
	}
	if q.Permission != nil && !slices.Contains(l.Permissions, *q.Permission) {
		return false
	}
	if p.text != nil {
		return p.text[i>>6]&(1<<(i&63)) != 0
	}
	if q.Q != "" && !q.matchText(l) {
		return false
	}
	return true
}

// matching returns the bitmap of the listings that match p's query and
// their number; the caller hands the bitmap back with textindex.PutBitmap. Text is searched first, in the replica's text index; the
// other filters then test only its matches.
func (e *Engine) matching(p *queryPlan) (match []uint64, total int) {
	ls := e.ls
	q := p.q
	p.text, p.partial = e.textMatches(q)
	defer textindex.PutBitmap(p.text)
	match = textindex.GetBitmap((len(ls) + 63) / 64)
	test := func(i int) {
		if p.match(ls, i) {
			match[i>>6] |= 1 << (i & 63)
			total++
		}
	}
	if list, ok := p.candidates(); ok {
		for _, i := range list {
			test(int(i))
		}
		return match, total
	}
	lo, hi := 0, len(ls)
	if q.Store != nil {
		lo, hi = e.storeStart[*q.Store], e.storeStart[*q.Store+1]
	}
	// Without text, or with text that many listings hold (a common word:
	// "Pro" is in a fifth of the names), the column kernels test 64
	// listings a step, the text bitmap one of them; with a rarer word,
	// only its matches are tested.
	if p.text == nil || denseIn(p.text, lo, hi) {
		return match, p.scan(ls, match, lo, hi)
	}
	for w := lo >> 6; w <= (hi-1)>>6 && w < len(p.text); w++ {
		for b := p.text[w]; b != 0; b &= b - 1 {
			if i := w<<6 | bits.TrailingZeros64(b); i >= lo && i < hi {
				test(i)
			}
		}
	}
	return match, total
}

// denseIn reports whether more than one listing in 64 of [lo, hi) is set
// in b: then testing every listing by columns costs less than testing
// each set one by its fields.
func denseIn(b []uint64, lo, hi int) bool {
	n := 0
	for w := lo >> 6; w <= (hi-1)>>6 && w < len(b); w++ {
		n += bits.OnesCount64(b[w])
	}
	return n > (hi-lo)/64
}
