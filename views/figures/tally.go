package figures

import (
	"cmp"
	"slices"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
)

// tally is what one pass over the replica counts beside each store's
// statistics: the summary, each category across stores, the years of
// the last updates, the permissions, the topics with their listings, the
// usage buckets.
type tally struct {
	r                *replica.Replica
	ref              time.Time // the data's newest reading
	weekAgo, climbAt int64
	sum              *Summary
	allCats          map[string]*catTally
	years            map[int]int
	perms            map[string]int
	topics           map[string]*Topic
	usageB           []int
}

// catTally counts a category's live listings across stores, and those
// without a rating.
type catTally struct{ n, unrated int }

func newTally(r *replica.Replica, snapshots int64) *tally {
	ref := r.Info().ReadingsMark
	return &tally{r: r, ref: ref, weekAgo: ref.Add(-7 * 24 * time.Hour).Unix(), climbAt: r.Info().ClimbAt.Unix(),
		sum: &Summary{Snapshots: snapshots}, allCats: map[string]*catTally{}, years: map[int]int{}, perms: map[string]int{},
		topics: map[string]*Topic{}, usageB: make([]int, 7)}
}

// storeTally is one store's counts in the pass.
type storeTally struct {
	st                    *StoreStats
	pc                    PlatformCount
	sizeB, ratingB, kinds []int
	mv, access            []int
	cats                  map[string]*CategoryStat
	ratingSum             float64
}

// store counts store s's listings: its statistics and its categories by
// name, with the summary's and the other tallies' share of them.
func (t *tally) store(s views.Store) (*StoreStats, []CategoryCount) {
	c := &storeTally{st: &StoreStats{Store: s.String(), AsOf: t.ref, SizeMeasure: s.SizeMeasure()}, pc: PlatformCount{Platform: int(s)},
		sizeB: make([]int, 7), ratingB: make([]int, 7), kinds: make([]int, 4), mv: make([]int, 2), access: make([]int, 4),
		cats: map[string]*CategoryStat{}}
	lo, _ := t.r.StoreRange(s)
	ls := t.r.OfStore(s)
	for i := range ls {
		t.add(c, s, &ls[i], int32(lo+i))
	}
	st := c.st
	if st.Rated > 0 {
		avg := views.RoundRating(c.ratingSum / float64(st.Rated))
		st.AverageRating = &avg
	}
	st.SizeBuckets = shares(SizeBucketLabels, c.sizeB)
	st.RatingDistribution = shares(RatingBucketLabels, c.ratingB)
	st.Kinds = shares([]string{"unknown", "extension", "theme", "app"}, c.kinds)
	st.ManifestVersions, st.AccessLevels = []VersionShare{}, []LevelShare{}
	if s.ReadsManifests() {
		st.ManifestVersions = []VersionShare{{2, c.mv[0]}, {3, c.mv[1]}}
		for i, n := range c.access {
			st.AccessLevels = append(st.AccessLevels, LevelShare{i + 1, n})
		}
	}
	st.TopCategories = []CategoryStat{}
	names := make([]CategoryCount, 0, len(c.cats))
	for _, cat := range c.cats {
		st.TopCategories = append(st.TopCategories, *cat)
		cc := CategoryCount{Name: cat.Name, Listings: cat.Listings, TotalSize: cat.TotalSize}
		if cat.n7 > 0 {
			cc.Growth7d = &cat.g7
		}
		if cat.n30 > 0 {
			cc.Growth30d = &cat.g30
		}
		names = append(names, cc)
	}
	slices.SortFunc(st.TopCategories, func(a, b CategoryStat) int {
		return cmp.Or(cmp.Compare(b.Listings, a.Listings), cmp.Compare(a.Name, b.Name))
	})
	st.TopCategories = st.TopCategories[:min(10, len(st.TopCategories))]
	slices.SortFunc(names, func(a, b CategoryCount) int { return cmp.Compare(a.Name, b.Name) })
	st.TotalSizeChange7d = st.TotalSize - st.TotalSize7dAgo
	c.pc.Known, c.pc.Live, c.pc.Delisted = st.Known, st.Live, st.Delisted
	t.sum.Platforms = append(t.sum.Platforms, c.pc)
	t.sum.Known += st.Known
	t.sum.Crawled += c.pc.Crawled
	t.sum.Live += st.Live
	t.sum.Delisted += st.Delisted
	t.sum.Pending += st.Pending
	return st, names
}

// add counts listing l of store s, at index idx of the replica.
func (t *tally) add(c *storeTally, s views.Store, l *views.Listing, idx int32) {
	st := c.st
	st.Known++
	if b := l.Hist.ClimbBase(); b.Valid() && l.Crawled() && l.FirstSeen <= t.climbAt && (l.Delisted == 0 || l.Delisted > t.climbAt) {
		st.TotalSize7dAgo += b.Value // live then, by its newest size then
	}
	if !l.Crawled() {
		st.Pending++
		return
	}
	c.pc.Crawled++
	if l.Delisted != 0 {
		st.Delisted++
		if l.Delisted > t.weekAgo {
			st.DelistedThisWeek++
		}
		return
	}
	st.Live++
	size, hasSize := l.Size()
	rating, rated := l.Rating()
	if hasSize {
		st.TotalSize += size
	}
	if l.FirstSeen > t.weekAgo {
		st.NewThisWeek++
	}
	if l.Featured {
		st.Featured++
	}
	if rated {
		st.Rated++
		c.ratingSum += views.RoundRating(rating)
		t.sum.Rated++
	}
	c.sizeB[sizeBucket(size, hasSize)]++
	c.ratingB[ratingBucket(rating, rated)]++
	c.kinds[min(int(l.Kind), 3)]++
	if s.ReadsManifests() {
		if l.ManifestVersion == 2 || l.ManifestVersion == 3 {
			c.mv[l.ManifestVersion-2]++
		}
		if l.AccessLevel >= 1 && l.AccessLevel <= 4 {
			c.access[l.AccessLevel-1]++
		}
		for _, p := range l.Permissions {
			t.perms[p]++
		}
	}
	cat := t.category(c, l.Category, size, hasSize, rated)
	if g, ok := l.SizeGrowth(views.Window7d); ok {
		cat.g7 += g.Delta
		cat.n7++
	}
	if g, ok := l.SizeGrowth(views.Window30d); ok {
		cat.g30 += g.Delta
		cat.n30++
	}
	// The summary's usage buckets count usage figures: apple has none.
	usage, hasUsage := l.Usage()
	t.usageB[sizeBucket(usage, hasUsage)]++
	if l.Updated.Valid() {
		t.years[l.Updated.Time().Year()]++
	}
	if !views.VersionComparable(l.Version) {
		t.sum.NoVersionKey++
	}
	for _, name := range l.Topics {
		tp := t.topics[name]
		if tp == nil {
			tp = &Topic{Slug: name}
			t.topics[name] = tp
		}
		tp.byStore[s] = append(tp.byStore[s], idx)
	}
}

// category counts a live listing of category name, in its store and
// across stores, and returns the store's count.
func (t *tally) category(c *storeTally, name string, size int64, hasSize, rated bool) *CategoryStat {
	cat := c.cats[name]
	if cat == nil {
		cat = &CategoryStat{Name: name}
		c.cats[name] = cat
	}
	cat.Listings++
	if hasSize {
		cat.TotalSize += size
	}
	if !rated {
		cat.Unrated++
	}
	all := t.allCats[name]
	if all == nil {
		all = &catTally{}
		t.allCats[name] = all
	}
	all.n++
	if !rated {
		all.unrated++
	}
	return cat
}

// categories returns every category's live listings across stores, by
// name, and sets the summary's ten largest categories. The summary merges
// the spellings of one category across stores (chrome's "Developer
// Tools", edge's "Developer tools"): one slug, one entry, named as most
// of its listings spell it.
func (t *tally) categories() []CategoryCount {
	type merged struct {
		SummaryCategory
		best int // listings of the spelling in Label
	}
	var all []CategoryCount
	bySlug := map[string]*merged{}
	for name, c := range t.allCats {
		all = append(all, CategoryCount{Name: name, Listings: c.n})
		slug := views.CategorySlug(name)
		m := bySlug[slug]
		if m == nil {
			m = &merged{}
			bySlug[slug] = m
		}
		m.N += c.n
		m.Unrated += c.unrated
		if c.n > m.best || (c.n == m.best && name < m.Label) {
			m.Label, m.best = name, c.n
		}
	}
	for _, m := range bySlug {
		t.sum.Cats = append(t.sum.Cats, m.SummaryCategory)
	}
	slices.SortFunc(all, func(a, b CategoryCount) int { return cmp.Compare(a.Name, b.Name) })
	slices.SortFunc(t.sum.Cats, func(a, b SummaryCategory) int {
		return cmp.Or(cmp.Compare(b.N, a.N), cmp.Compare(a.Label, b.Label))
	})
	t.sum.Cats = t.sum.Cats[:min(10, len(t.sum.Cats))]
	if t.sum.Cats == nil {
		t.sum.Cats = []SummaryCategory{}
	}
	return all
}

// sortedTopics returns the topics, by slug, each store's listings of each
// by size, largest first (then by id; those without a size last).
func sortedTopics(ls []views.Listing, topics map[string]*Topic) []Topic {
	var out []Topic
	var items []ranked
	for _, t := range topics {
		for s := range t.byStore {
			items = items[:0]
			for _, i := range t.byStore[s] {
				size, ok := ls[i].Size()
				if !ok {
					size = -1 // listings without a size go last
				}
				items = append(items, ranked{key: size, idx: i})
			}
			sortRanked(items) // by size, then id
			for k, it := range items {
				t.byStore[s][k] = it.idx
			}
		}
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b Topic) int { return cmp.Compare(a.Slug, b.Slug) })
	return out
}
