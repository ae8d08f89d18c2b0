package views

import (
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// LegacySorts are the sort keys of /api/extensions, in a fixed order.
var LegacySorts = []string{"installs", "name", "category", "rating", "ratingcount", "updated", "firstseen",
	"access", "growth1d", "growth7d", "growth30d", "growth365d", "growthpct1d", "growthpct7d", "growthpct30d",
	"growthpct365d", "ratinggrowth1d", "ratinggrowth7d", "ratinggrowthpct1d", "ratinggrowthpct7d"}

// LegacySortIndex returns the index of a sort key in LegacySorts; an
// unknown key means installs (index 0), as the spec says.
func LegacySortIndex(key string) int {
	if i := slices.Index(LegacySorts, key); i >= 0 {
		return i
	}
	return 0
}

// Sort orders that only the v1 API uses, kept after the legacy ones.
const (
	SortSize      = 20 // size: usage figure, or rating count on apple
	SortCreated   = 21 // store's creation date
	SortRankClimb = 22 // 7-day store-rank climb
	numSorts      = 23
)

// legacyGrowthSort reports whether sort index i is a growth sort, which
// lists only listings that have the figure.
func legacyGrowthSort(i int) bool { return i >= 8 && i < len(LegacySorts) }

// legacySort says how one legacy sort key reads a listing.
type legacySort struct {
	plain  string // a non-growth key, or ""
	window Window
	rating bool // rating-count growth rather than size growth
	pct    bool // the percent rather than the change
}

// legacySorts parallels LegacySorts.
var legacySorts = func() []legacySort {
	windows := map[string]Window{"1d": Window1d, "7d": Window7d, "30d": Window30d, "365d": Window365d}
	out := make([]legacySort, len(LegacySorts))
	for i, k := range LegacySorts {
		if i < 8 {
			out[i] = legacySort{plain: k}
			continue
		}
		rest, rating := strings.CutPrefix(k, "rating")
		rest = strings.TrimPrefix(rest, "growth")
		rest, pct := strings.CutPrefix(rest, "pct")
		out[i] = legacySort{window: windows[rest], rating: rating, pct: pct}
	}
	return out
}()

// legacyKey returns a listing's value for sort index i as an integer that
// orders like it (larger first), and whether the listing has one.
func legacyKey(l *Listing, i int) (int64, bool) {
	switch i {
	case SortSize:
		return l.Size()
	case SortCreated:
		return int64(l.Created), l.Created.Valid()
	case SortRankClimb:
		return 0, false // from the figures: see Figures.sortKey
	}
	s := &legacySorts[i]
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

// legacyOrders holds, for every legacy sort, the crawled listings in
// descending order: those with a value first (ties by store and id), then
// those without (by store and id). present counts the first part.
type legacyOrders struct {
	order   [][]int32
	present []int
}

// buildLegacyOrders sorts the crawled listings once per sort key, in
// parallel, with a stable radix sort: listings are visited in store and id
// order, so ties stay in that order.
func (f *Figures) buildLegacyOrders() {
	ls := f.replica.listings
	n := numSorts
	f.legacy = legacyOrders{order: make([][]int32, n), present: make([]int, n)}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			var with []keyed
			var without []int32
			switch {
			case i < len(LegacySorts) && LegacySorts[i] == "name":
				with = f.nameKeys()
			case i < len(LegacySorts) && LegacySorts[i] == "category":
				with = f.categoryKeys()
			default:
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
			radixSort(with)
			if i == LegacySortIndex("name") {
				f.sortEqualNamePrefixes(with)
			}
			order := make([]int32, 0, len(with)+len(without))
			for _, r := range with {
				order = append(order, r.idx)
			}
			f.legacy.present[i] = len(with)
			f.legacy.order[i] = append(order, without...)
		})
	}
	wg.Wait()
}

// sortKey is legacyKey with the figures' own keys (the rank climb).
func (f *Figures) sortKey(j, i int) (int64, bool) {
	if i == SortRankClimb {
		return int64(f.climb[j]), f.hasClimb[j]
	}
	return legacyKey(&f.replica.listings[j], i)
}

// categoryKeys keys crawled listings by their category's rank among the
// distinct category names, descending (Z to A).
func (f *Figures) categoryKeys() []keyed {
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
	out := make([]keyed, 0, len(ls))
	for j := range ls {
		if ls[j].Crawled() {
			out = append(out, keyed{key: names[ls[j].Category], idx: int32(j)})
		}
	}
	return out
}

// nameKeys keys crawled listings by the first 8 bytes of their name,
// descending; sortEqualNamePrefixes then orders names that share them.
func (f *Figures) nameKeys() []keyed {
	ls := f.replica.listings
	out := make([]keyed, 0, len(ls))
	for j := range ls {
		if ls[j].Crawled() {
			out = append(out, keyed{key: ^prefix8(ls[j].Name), idx: int32(j)})
		}
	}
	return out
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

// LegacyQuery is a parsed /api/extensions request.
type LegacyQuery struct {
	Store           *Store
	Q               string
	Category        *string
	Kind            *Kind
	Featured        *bool
	MinInstalls     *float64
	MaxInstalls     *float64
	Rated           *bool
	MinRating       *float64
	MaxRating       *float64
	MinRatingCount  *int64
	MaxRatingCount  *int64
	MinVersion      *string
	MaxVersion      *string
	UpdatedAfter    *Day
	UpdatedBefore   *Day
	FirstSeenAfter  *Day
	FirstSeenBefore *Day
	IncludeDelisted bool
	DelistedOnly    bool
	DelistedAfter   *Day
	DelistedBefore  *Day
	ManifestVersion *uint8
	Permission      *string
	HostAccessAll   bool
	MinAccessLevel  *uint8
	Sort            int  // index in LegacySorts, or one of the v1-only Sort* orders
	Asc             bool // ascending; missing values still last
	Page            int  // from 1
	PageSize        int  // 1 to 200

	// v1 only.
	NameOnly bool    // q matches name and developer only
	MinSize  *int64  // bounds on size (needs Store: size means ratings on apple)
	MaxSize  *int64  //
	Topic    *string // live listings with this tag

	// Deadline, when not zero, is the text search's time budget: past it
	// the search stops and the answer is partial (see Figures.List).
	Deadline time.Time
}

// HostReachesAll reports whether a host pattern grants every website.
func HostReachesAll(h string) bool {
	switch h {
	case "<all_urls>", "*://*/*", "http://*/*", "https://*/*", "*://*", "http://*/", "https://*/":
		return true
	}
	return false
}

// match reports whether l passes every filter of q.
func (q *LegacyQuery) match(l *Listing) bool {
	if !l.Crawled() {
		return false
	}
	delistedOnly := q.DelistedOnly || q.DelistedAfter != nil || q.DelistedBefore != nil
	switch {
	case delistedOnly && l.Delisted == 0:
		return false
	case !delistedOnly && !q.IncludeDelisted && l.Delisted != 0:
		return false
	}
	if q.Store != nil && l.Store != *q.Store {
		return false
	}
	if q.Kind != nil && l.Kind != *q.Kind {
		return false
	}
	if q.Category != nil && l.Category != *q.Category {
		return false
	}
	if q.Featured != nil && l.Featured != *q.Featured {
		return false
	}
	if q.MinInstalls != nil || q.MaxInstalls != nil {
		u, ok := l.Usage()
		if !ok || (q.MinInstalls != nil && float64(u) < *q.MinInstalls) || (q.MaxInstalls != nil && float64(u) > *q.MaxInstalls) {
			return false
		}
	}
	rating, rated := l.Rating()
	if q.Rated != nil && rated != *q.Rated {
		return false
	}
	if q.MinRating != nil || q.MaxRating != nil {
		r := RoundRating(rating)
		if !rated || (q.MinRating != nil && r < *q.MinRating) || (q.MaxRating != nil && r > *q.MaxRating) {
			return false
		}
	}
	if q.MinRatingCount != nil || q.MaxRatingCount != nil {
		n, ok := l.RatingCount()
		if !rated || !ok || (q.MinRatingCount != nil && n < *q.MinRatingCount) || (q.MaxRatingCount != nil && n > *q.MaxRatingCount) {
			return false
		}
	}
	if q.MinVersion != nil {
		if c, ok := CompareVersions(l.Version, *q.MinVersion); !ok || c < 0 {
			return false
		}
	}
	if q.MaxVersion != nil {
		if c, ok := CompareVersions(l.Version, *q.MaxVersion); !ok || c > 0 {
			return false
		}
	}
	if q.UpdatedAfter != nil || q.UpdatedBefore != nil {
		if !l.Updated.Valid() || (q.UpdatedAfter != nil && l.Updated < *q.UpdatedAfter) || (q.UpdatedBefore != nil && l.Updated > *q.UpdatedBefore) {
			return false
		}
	}
	if !inDays(l.FirstSeen, q.FirstSeenAfter, q.FirstSeenBefore) {
		return false
	}
	if (q.DelistedAfter != nil || q.DelistedBefore != nil) && !inDays(l.Delisted, q.DelistedAfter, q.DelistedBefore) {
		return false
	}
	if q.ManifestVersion != nil && l.ManifestVersion != *q.ManifestVersion {
		return false
	}
	if q.Permission != nil && !slices.Contains(l.Permissions, *q.Permission) {
		return false
	}
	if q.HostAccessAll && !slices.ContainsFunc(l.HostAccess, HostReachesAll) && !slices.Contains(l.Permissions, "<all_urls>") {
		return false
	}
	if q.MinAccessLevel != nil && (l.AccessLevel == 0 || l.AccessLevel < *q.MinAccessLevel) {
		return false
	}
	if q.Q != "" && !q.matchText(l) {
		return false
	}
	if q.MinSize != nil || q.MaxSize != nil {
		sz, ok := l.Size()
		if !ok || (q.MinSize != nil && sz < *q.MinSize) || (q.MaxSize != nil && sz > *q.MaxSize) {
			return false
		}
	}
	if q.Topic != nil && (!slices.Contains(l.Topics, *q.Topic) || !l.Live()) {
		return false
	}
	if legacyGrowthSort(q.Sort) {
		if _, ok := legacyKey(l, q.Sort); !ok {
			return false // a growth sort lists only listings with the figure
		}
	}
	return true
}

// inDays reports whether the unix time t falls within the inclusive days.
func inDays(t int64, after, before *Day) bool {
	if after != nil && t < after.Time().Unix() {
		return false
	}
	if before != nil && t >= (*before+1).Time().Unix() {
		return false
	}
	return true
}

// matchText matches q against name and developer, and from three
// characters also the description on chrome, edge and firefox, ignoring
// case.
func (q *LegacyQuery) matchText(l *Listing) bool {
	if containsFold(l.Name, q.Q) || containsFold(l.Developer, q.Q) {
		return true
	}
	return !q.NameOnly && utf8.RuneCountInString(q.Q) >= 3 && l.Store != Apple && l.Store != GooglePlay && containsFold(l.Description, q.Q)
}

// Legacy runs q: the number of matching listings and the listings of the
// requested page, in order.
func (f *Figures) Legacy(q *LegacyQuery) (total int, page []*Listing) {
	ls := f.replica.listings
	p := f.cols.plan(q)
	if p.none {
		return 0, nil
	}
	match, total := f.matching(p)
	defer putBitmap(match)
	skip := (q.Page - 1) * q.PageSize
	if skip >= total {
		return total, nil
	}
	order, present := f.legacy.order[q.Sort], f.legacy.present[q.Sort]
	take := func(j int32) bool {
		if match[j>>6]&(1<<(j&63)) == 0 {
			return false
		}
		if skip > 0 {
			skip--
			return false
		}
		page = append(page, &ls[j])
		return len(page) == q.PageSize
	}
	if q.Asc {
		for p := present - 1; p >= 0; p-- {
			if take(order[p]) {
				return total, page
			}
		}
	} else {
		for p := 0; p < present; p++ {
			if take(order[p]) {
				return total, page
			}
		}
	}
	for p := present; p < len(order); p++ { // missing values last, either way
		if take(order[p]) {
			return total, page
		}
	}
	return total, page
}

// LegacyRow is one row of /api/extensions, field for field as the spec
// names them. Missing values are null, never left out.
type LegacyRow struct {
	ID    string     `json:"id"`
	S     *string    `json:"s"`
	N     string     `json:"n"`
	D     string     `json:"d"`
	C     string     `json:"c"`
	T     int        `json:"t"`
	P     int        `json:"p"`
	I     *int64     `json:"i"`
	WD    *int64     `json:"wd"`
	CD    *string    `json:"cd"`
	R     *float64   `json:"r"`
	RC    *int64     `json:"rc"`
	V     string     `json:"v"`
	U     *string    `json:"u"`
	FS    time.Time  `json:"fs"`
	DU    *time.Time `json:"du"`
	AL    int        `json:"al"`
	IC    string     `json:"ic"`
	F     bool       `json:"f"`
	DS    string     `json:"ds"`
	SP    [][2]int64 `json:"sp"`
	G1    *int64     `json:"g1"`
	G7    *int64     `json:"g7"`
	G30   *int64     `json:"g30"`
	G365  *int64     `json:"g365"`
	G1P   *float64   `json:"g1p"`
	G7P   *float64   `json:"g7p"`
	G30P  *float64   `json:"g30p"`
	G365P *float64   `json:"g365p"`
	G1B   *time.Time `json:"g1b"`
	G7B   *time.Time `json:"g7b"`
	G30B  *time.Time `json:"g30b"`
	G365B *time.Time `json:"g365b"`
	RG1   *int64     `json:"rg1"`
	RG7   *int64     `json:"rg7"`
	RG1P  *float64   `json:"rg1p"`
	RG7P  *float64   `json:"rg7p"`
	RG1B  *time.Time `json:"rg1b"`
	RG7B  *time.Time `json:"rg7b"`
	LC    *time.Time `json:"lc"`
}

// NewLegacyRow returns the row of l; today is the data's newest day, from
// which the sparkline's days-ago are counted.
func NewLegacyRow(l *Listing, today Day) LegacyRow {
	d := NewListingDoc(l, nil)
	row := LegacyRow{ID: l.ID, S: d.Slug, N: l.Name, D: l.Developer, C: l.Category, T: int(l.Kind),
		P: int(l.Store), I: d.Usage, WD: d.WeeklyDownloads, CD: d.Created, V: l.Version, U: d.Updated,
		FS: d.FirstSeen, DU: d.DelistedAt, AL: int(l.AccessLevel), IC: l.Icon, F: l.Featured,
		DS: l.Description, SP: [][2]int64{}, LC: d.GrowthComputedAt}
	if d.Rating != nil {
		row.R, row.RC = d.Rating, d.RatingCount
	}
	l.Hist.Sparkline(func(p SparkPoint) {
		if ago := int64(today - p.Day); ago >= 0 && ago < SparkDays {
			row.SP = append(row.SP, [2]int64{ago, p.Value})
		}
	})
	set := func(c *ChangeDoc, g **int64, p **float64, b **time.Time) {
		if c != nil {
			*g, *p, *b = &c.Change, c.Percent, &c.Since
		}
	}
	set(d.Growth.D1, &row.G1, &row.G1P, &row.G1B)
	set(d.Growth.D7, &row.G7, &row.G7P, &row.G7B)
	set(d.Growth.D30, &row.G30, &row.G30P, &row.G30B)
	set(d.Growth.D365, &row.G365, &row.G365P, &row.G365B)
	if d.RatingGrowth != nil {
		set(d.RatingGrowth.D1, &row.RG1, &row.RG1P, &row.RG1B)
		set(d.RatingGrowth.D7, &row.RG7, &row.RG7P, &row.RG7B)
	}
	return row
}
