// Package figures computes every figure of one replica that is not a
// listing's own: store and category ranks and climbs, the charts,
// categories, topics, store statistics and the summary, and it assembles
// the replica's links, listing queries and change feed, all once per
// build and before any request asks.
package figures

import (
	"cmp"
	"math"
	"math/bits"
	"slices"
	"sort"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/feed"
	"github.com/edge-stats/edge/views/links"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/radix"
	"github.com/edge-stats/edge/views/replica"
)

// Chart names. Every chart holds up to ChartSize live listings, per store
// and per (store, category).
const (
	ChartTop      = "top"       // by size
	ChartTrending = "trending"  // by size growth over the charts' window (replica.Info.ChartWindow), positive only
	ChartRising   = "rising"    // by growth percent over the charts' window, among listings of at least RisingMinSize
	ChartNew      = "new"       // first seen in the last NewDays days, by size
	ChartTopRated = "top-rated" // by rating, among listings with at least TopRatedMinRatings ratings
	ChartClimbers = "climbers"  // by 7-day store-rank climb (positive only)
)

// Charts lists the chart names in a fixed order.
var Charts = []string{ChartTop, ChartTrending, ChartRising, ChartNew, ChartTopRated, ChartClimbers}

// Chart rules.
const (
	ChartSize          = 100
	NewDays            = 30
	TopRatedMinRatings = 50
)

// ChartKey names one chart: a store's, or a store category's.
type ChartKey struct {
	Store    views.Store
	Chart    string
	Category string // "" for the whole store
}

// ChartPos is a listing's position in one chart.
type ChartPos struct {
	Chart    string
	Category string // "" for the whole store
	Position int    // 1-based
}

// Figures holds every figure computed from one replica. It is immutable.
// Listings are referred to by their index in the replica.
type Figures struct {
	replica   *replica.Replica
	builtAt   time.Time
	buildTime time.Duration
	phases    []BuildPhase

	storeRank []int32 // per listing; views.NoRank when unranked
	catRank   []int32
	climb     []int32 // 7-day store-rank climb; valid where hasClimb
	hasClimb  []bool

	charts    map[ChartKey][]int32
	positions map[int32][]ChartPos
	// considered counts, per chart, the live listings its rule looked at:
	// those with its figure and past its floor, before the rule's own
	// condition (positive growth, a climb), for saying why a chart is
	// short or empty (Considered).
	considered map[ChartKey]int

	categories    [views.NumStores][]CategoryCount
	allCategories []CategoryCount
	topics        []Topic
	stats         [views.NumStores]*StoreStats
	summary       *Summary
	permissions   []PermissionCount
	links         *links.Set                           // listings linked to the same extension in other stores
	listings      *listq.Engine                        // the listing queries
	feed          *feed.Feed                           // the listings by when they last changed
	developers    []int32                              // each store's listings by developer (developerIndex)
	former        [views.NumStores]map[string]struct{} // developers a listing left (formerDevelopers)
}

// BuildPhases returns how long each phase of the build took, in order.
func (f *Figures) BuildPhases() []BuildPhase { return f.phases }

// Merged reports whether the figures were built from the figures before
// a delta (BuildFrom), their sort orders merged rather than sorted.
func (f *Figures) Merged() bool { return f.listings.Merged() }

// Replica returns the replica the figures were computed from.
func (f *Figures) Replica() *replica.Replica { return f.replica }

// Listings returns the engine of listing queries over the figures'
// replica.
func (f *Figures) Listings() *listq.Engine { return f.listings }

// Feed returns the change feed of the figures' replica.
func (f *Figures) Feed() *feed.Feed { return f.feed }

// Links returns the listings of other stores judged the same extension
// as l, in store order.
func (f *Figures) Links(l *views.Listing) []links.Link { return f.links.Of(f.replica.Index(l)) }

// BuiltAt returns when the figures were computed and how long it took.
func (f *Figures) BuiltAt() (time.Time, time.Duration) { return f.builtAt, f.buildTime }

// Ranks returns l's store rank and category rank (views.NoRank when unranked),
// and its 7-day store-rank climb with whether it has one.
func (f *Figures) Ranks(l *views.Listing) (store, category int, climb int, hasClimb bool) {
	i := f.replica.Index(l)
	if i < 0 {
		return views.NoRank, views.NoRank, 0, false
	}
	return int(f.storeRank[i]), int(f.catRank[i]), int(f.climb[i]), f.hasClimb[i]
}

// Positions returns l's positions in the charts, in chart order.
func (f *Figures) Positions(l *views.Listing) []ChartPos { return f.positions[f.replica.Index(l)] }

// Chart returns a chart's listings, best first; nil when the chart does not
// exist or is empty.
func (f *Figures) Chart(k ChartKey) []*views.Listing {
	idx := f.charts[k]
	out := make([]*views.Listing, len(idx))
	for i, j := range idx {
		out[i] = &f.replica.All()[j]
	}
	return out
}

// Considered returns how many live listings chart k's rule looked at:
// those with the chart's figure (a size, a growth over the window, a
// climb, a rating count past the floor) and past its size floor, of which
// those meeting its condition (growth above 0, a climb) are its entries,
// up to ChartSize. A chart with fewer entries than this had fewer
// listings meet the condition.
func (f *Figures) Considered(k ChartKey) int { return f.considered[k] }

// Ranking is the figure a chart of a window ranked a listing by, between
// the same two instants for every entry: the size change and its percent
// over the charts' window (trending, rising), or the store-rank climb
// from the climb reference time to the data's now (climbers).
type Ranking struct {
	Chart    string
	From, To int64   // unix seconds
	Change   int64   // trending and rising
	Percent  float64 // trending and rising: of the size at From; NaN when that is 0
	Climb    int     // climbers
}

// RankedBy returns the figure chart ranks l by; ok is false for a chart
// that is not of a window (top, new, top-rated) and for a listing without
// the figure.
func (f *Figures) RankedBy(chart string, l *views.Listing) (Ranking, bool) {
	from, to, ok := f.Window(chart)
	if !ok {
		return Ranking{}, false
	}
	r := Ranking{Chart: chart, From: from, To: to}
	if chart == ChartClimbers {
		_, _, r.Climb, ok = f.Ranks(l)
		return r, ok
	}
	g, ok := l.ChartGrowth(from, to)
	r.Change, r.Percent = g.Delta, g.Percent
	return r, ok
}

// Window returns the two instants (unix seconds) chart ranks between;
// ok is false for a chart that is not of a window.
func (f *Figures) Window(chart string) (from, to int64, ok bool) {
	info := f.replica.Info()
	switch chart {
	case ChartTrending, ChartRising:
		from, to = info.ChartWindow()
		return from, to, true
	case ChartClimbers:
		return info.ClimbAt.Unix(), info.ReadingsMark.Unix(), true
	}
	return 0, 0, false
}

// ranked is a sort item: a listing index with its keys.
type ranked struct {
	key  int64 // primary key, larger first
	key2 int64 // secondary key, larger first
	idx  int32
}

// sortRanked sorts largest key first, then largest key2, then by id. The
// items must be of one store, whose listings the replica keeps sorted by
// id: comparing indexes compares ids. It packs the keys above the index
// into one word and sorts the words by radix (package radix) when they
// fit, as they do for sizes, ratings and climbs: a store's ranking is
// millions of items, which a comparison sort took most of the ranks'
// time over.
func sortRanked(items []ranked) {
	if len(items) < 2 {
		return
	}
	minK, maxK := items[0].key, items[0].key
	minK2, maxK2 := items[0].key2, items[0].key2
	minI, maxI := items[0].idx, items[0].idx
	inOrder := true
	for n, it := range items {
		minK, maxK = min(minK, it.key), max(maxK, it.key)
		minK2, maxK2 = min(minK2, it.key2), max(maxK2, it.key2)
		minI, maxI = min(minI, it.idx), max(maxI, it.idx)
		inOrder = inOrder && (n == 0 || items[n-1].idx < it.idx)
	}
	// Spans of a difference that overflows int64 do not fit either.
	span := func(lo, hi int64) (uint, bool) {
		d := hi - lo
		return uint(bits.Len64(uint64(d))), d >= 0
	}
	kBits, okK := span(minK, maxK)
	k2Bits, okK2 := span(minK2, maxK2)
	iBits := uint(bits.Len64(uint64(maxI - minI)))
	if !okK || !okK2 || kBits+k2Bits+iBits > 64 {
		sortRankedCompare(items)
		return
	}
	words := make([]uint64, len(items))
	for n, it := range items {
		// Larger keys first: each key counted down from its largest.
		words[n] = uint64(maxK-it.key)<<(k2Bits+iBits) | uint64(maxK2-it.key2)<<iBits | uint64(it.idx-minI)
	}
	from := iBits // items in index order need no pass over the index
	if !inOrder {
		from = 0
	}
	radix.SortBits(words, nil, from, kBits+k2Bits+iBits)
	iMask, k2Mask := uint64(1)<<iBits-1, uint64(1)<<k2Bits-1
	for n, w := range words {
		items[n] = ranked{key: maxK - int64(w>>(k2Bits+iBits)), key2: maxK2 - int64(w>>iBits&k2Mask), idx: minI + int32(w&iMask)}
	}
}

// sortRankedCompare is sortRanked by comparison, for keys too wide to
// pack.
func sortRankedCompare(items []ranked) {
	slices.SortFunc(items, func(a, b ranked) int {
		if a.key != b.key {
			return cmp.Compare(b.key, a.key)
		}
		if a.key2 != b.key2 {
			return cmp.Compare(b.key2, a.key2)
		}
		return cmp.Compare(a.idx, b.idx)
	})
}

// rankStore computes store ranks, category ranks and 7-day climbs of the
// listings ls[lo:hi] (one store). Ranks count live listings with a size
// read in the views.RankLookback days up to the data's newest day (as a
// day of their history does), largest first, ties by id. The rank 7 days
// ago counts the listings that were live then, by their size as of the
// climb reference time, read in the RankLookback days up to its day. It
// returns the ranked listings in rank order.
func (f *Figures) rankStore(lo, hi int) []ranked {
	ls := f.replica.All()
	climbAt := f.replica.Info().ClimbAt.Unix()
	readSince := (views.DayOf(f.replica.Info().ReadingsMark) - views.RankLookback + 1).Time().Unix()
	readSinceThen := (views.DayOf(f.replica.Info().ClimbAt) - views.RankLookback + 1).Time().Unix()
	now, then := make([]ranked, 0, hi-lo), make([]ranked, 0, hi-lo)
	for i := lo; i < hi; i++ {
		l := &ls[i]
		if size, ok := l.Size(); ok && l.Live() && l.ReadAt >= readSince {
			now = append(now, ranked{key: size, idx: int32(i)})
		}
		if b := l.Hist.ClimbBase(); b.Valid() && b.At >= readSinceThen && l.FirstSeen <= climbAt && (l.Delisted == 0 || l.Delisted > climbAt) {
			then = append(then, ranked{key: b.Value, idx: int32(i)})
		}
	}
	sortRanked(now)
	sortRanked(then)
	rankThen := make([]int32, hi-lo) // by index - lo; 0 = not ranked then
	for r, it := range competition(then) {
		rankThen[int(then[r].idx)-lo] = it
	}
	type catCount struct {
		seen, rank int32
		last       int64
	}
	perCat := map[string]*catCount{}
	for r, rank := range competition(now) {
		it := now[r]
		f.storeRank[it.idx] = rank
		cat := ls[it.idx].Category
		cc := perCat[cat]
		if cc == nil {
			cc = &catCount{}
			perCat[cat] = cc
		}
		cc.seen++
		if cc.seen == 1 || it.key != cc.last {
			cc.rank, cc.last = cc.seen, it.key
		}
		f.catRank[it.idx] = cc.rank
		if old := rankThen[int(it.idx)-lo]; old != 0 {
			f.climb[it.idx], f.hasClimb[it.idx] = old-rank, true
		}
	}
	return now
}

// competition returns the ranks of items sorted largest key first:
// 1 plus the number of items with a larger key, so that ties share a rank
// (1, 2, 2, 4).
func competition(items []ranked) []int32 {
	out := make([]int32, len(items))
	for r := range items {
		if r > 0 && items[r].key == items[r-1].key {
			out[r] = out[r-1]
		} else {
			out[r] = int32(r + 1)
		}
	}
	return out
}

// storeCharts are the charts of one store and its categories, and how
// many listings each considered.
type storeCharts struct {
	charts     map[ChartKey][]int32
	considered map[ChartKey]int
}

// Chart indexes in Charts, for the arrays chartStore keeps a chart.
const (
	cTop = iota
	cTrending
	cRising
	cNew
	cTopRated
	cClimbers
	numCharts
)

// chartCounts counts, per chart, the listings its rule considered.
type chartCounts [numCharts]int

// chartStore builds every chart of one store and of each of its
// categories; byRank is the store's ranking, which is the top chart's
// order. One pass over the store's listings keys every chart (a
// listing's memory is read once, its category's counters found once).
func (f *Figures) chartStore(s views.Store, lo, hi int, byRank []ranked) storeCharts {
	ls := f.replica.All()
	var whole chartCounts
	perCat := map[string]*chartCounts{}
	counts := func(cat string) *chartCounts {
		c := perCat[cat]
		if c == nil {
			c = &chartCounts{}
			perCat[cat] = c
		}
		return c
	}
	var items [numCharts][]ranked
	items[cTop] = byRank
	for _, it := range byRank {
		whole[cTop]++
		counts(ls[it.idx].Category)[cTop]++
	}
	newSince := f.replica.Info().ReadingsMark.Add(-NewDays * 24 * time.Hour).Unix()
	from, to := f.replica.Info().ChartWindow()
	floor := views.RisingMinSize(s)
	for i := lo; i < hi; i++ {
		l := &ls[i]
		if !l.Live() {
			continue
		}
		var considered [numCharts]bool
		size, hasSize := l.Size()
		// The charts of a window rank every listing over the same two
		// instants (docs/figures.md, Charts).
		if g, ok := l.ChartGrowth(from, to); ok {
			considered[cTrending] = true
			if g.Delta > 0 {
				items[cTrending] = append(items[cTrending], ranked{key: g.Delta, key2: size, idx: int32(i)})
			}
			// Ranked by the percent as published (two decimals), then
			// size: an entry's order can be read from its figures.
			if size >= floor && !math.IsNaN(g.Percent) {
				considered[cRising] = true
				if hundredths := int64(math.Round(g.Percent * 100)); hundredths > 0 {
					items[cRising] = append(items[cRising], ranked{key: hundredths, key2: size, idx: int32(i)})
				}
			}
		}
		// Every listing first seen in the window: a new app not rated yet
		// is new too (it comes after the sized ones).
		if l.FirstSeen >= newSince {
			considered[cNew] = true
			key := size
			if !hasSize {
				key = -1
			}
			items[cNew] = append(items[cNew], ranked{key: key, idx: int32(i)})
		}
		if rating, rated := l.Rating(); rated {
			if count, _ := l.RatingCount(); count >= TopRatedMinRatings {
				considered[cTopRated] = true
				items[cTopRated] = append(items[cTopRated], ranked{key: int64(math.Round(views.RoundRating(rating) * 100)), key2: count, idx: int32(i)})
			}
		}
		if f.hasClimb[i] && size >= floor {
			considered[cClimbers] = true
			if f.climb[i] > 0 {
				// Ties go to the better current rank.
				items[cClimbers] = append(items[cClimbers], ranked{key: int64(f.climb[i]), key2: -int64(f.storeRank[i]), idx: int32(i)})
			}
		}
		var c *chartCounts
		for k, yes := range considered {
			if !yes {
				continue
			}
			if c == nil {
				c = counts(l.Category)
			}
			whole[k]++
			c[k]++
		}
	}
	out := storeCharts{charts: map[ChartKey][]int32{}, considered: map[ChartKey]int{}}
	for k, chart := range Charts {
		if n := whole[k]; n > 0 {
			out.considered[ChartKey{s, chart, ""}] = n
		}
		for cat, c := range perCat {
			if c[k] > 0 {
				out.considered[ChartKey{s, chart, cat}] = c[k]
			}
		}
		if k != cTop {
			sortRanked(items[k])
		}
		byCat := map[string][]int32{}
		var top []int32
		for _, it := range items[k] {
			if len(top) < ChartSize {
				top = append(top, it.idx)
			}
			cat := ls[it.idx].Category
			if len(byCat[cat]) < ChartSize {
				byCat[cat] = append(byCat[cat], it.idx)
			}
		}
		if len(top) > 0 {
			out.charts[ChartKey{s, chart, ""}] = top
		}
		for cat, idx := range byCat {
			out.charts[ChartKey{s, chart, cat}] = idx
		}
	}
	return out
}

func (f *Figures) setChart(k ChartKey, idx []int32) {
	if len(idx) == 0 {
		return
	}
	f.charts[k] = idx
	for p, i := range idx {
		f.positions[i] = append(f.positions[i], ChartPos{Chart: k.Chart, Category: k.Category, Position: p + 1})
	}
}

// sortPositions orders every listing's chart positions: whole-store charts
// first, in chart order.
func (f *Figures) sortPositions() {
	order := map[string]int{}
	for i, c := range Charts {
		order[c] = i
	}
	for _, ps := range f.positions {
		sort.Slice(ps, func(a, b int) bool {
			if (ps[a].Category == "") != (ps[b].Category == "") {
				return ps[a].Category == ""
			}
			return order[ps[a].Chart] < order[ps[b].Chart]
		})
	}
}
