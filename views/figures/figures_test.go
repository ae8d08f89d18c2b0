package figures

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/replica"
)

var ref = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) int64 { return ref.Add(d).Unix() }

const day = 24 * time.Hour

// mk returns a live, read listing with the given size.
func mk(s views.Store, id, cat string, size int64, opts ...func(*views.Listing)) views.Listing {
	l := views.Listing{Store: s, ID: id, Name: id, Category: cat, FirstSeen: at(-300 * day), ReadAt: at(-time.Hour),
		Version: "1.0", Updated: views.DayOf(ref.Add(-40 * day))}
	if s == views.Apple {
		l.SetRatingCount(size, size >= 0)
	} else {
		l.SetUsage(size, size >= 0)
	}
	for _, o := range opts {
		o(&l)
	}
	return l
}

func climbBase(v int64) func(*views.Listing) {
	return func(l *views.Listing) { l.Hist.SetClimbBase(views.Base{Value: v, At: at(-7*day - time.Hour)}) }
}

// base7 sets the size a week before the newest reading to v, and the
// charts' window from v to the listing's size.
func base7(v int64) func(*views.Listing) {
	return func(l *views.Listing) {
		l.Hist.SetSizeBase(views.Window7d, views.Base{Value: v, At: at(-8 * day)})
		size, ok := l.Size()
		l.Hist.SetChartSizes(views.Base{Value: v}, true, views.Base{Value: size}, ok)
	}
}

func rated(r float64, n int64) func(*views.Listing) {
	return func(l *views.Listing) { l.SetRating(r, true); l.SetRatingCount(n, true) }
}

func delisted(d time.Duration) func(*views.Listing) {
	return func(l *views.Listing) { l.Delisted = at(d) }
}

func fixture() *Figures {
	ls := []views.Listing{
		mk(views.Chrome, "a", "X", 100, climbBase(500), base7(100)),
		mk(views.Chrome, "b", "X", 300, climbBase(100), base7(200), rated(4.9, 60)),
		mk(views.Chrome, "c", "Y", 300, rated(5, 10)),
		mk(views.Chrome, "d", "X", 50, climbBase(1000), delisted(-day)),
		mk(views.Chrome, "e", "Y", -1),
		mk(views.Chrome, "f", "X", 0, func(l *views.Listing) { l.ReadAt = 0 }), // known, never read
		mk(views.Chrome, "g", "Y", 2000, base7(1000), func(l *views.Listing) { l.FirstSeen = at(-10 * day) }),
		mk(views.Apple, "1", "Games", 40),
		mk(views.Apple, "2", "Games", 40, func(l *views.Listing) { l.Version = "beta" }),
	}
	ls[0].Permissions = []string{"tabs", "storage"}
	ls[1].Permissions = []string{"storage"}
	ls[3].Permissions = []string{"debugger"} // delisted: not counted
	ls[0].Topics, ls[6].Topics, ls[7].Topics = []string{"privacy"}, []string{"privacy"}, []string{"games"}
	r := replica.New(ls, replica.Info{ReadingsMark: ref, ClimbAt: ref.Add(-7 * day), HasHistory: true})
	return Build(r, 1234)
}

func ranksOf(f *Figures, s views.Store, id string) [3]int {
	st, cat, climb, ok := f.Ranks(f.Replica().Lookup(s, id))
	if !ok {
		climb = math.MinInt32
	}
	return [3]int{st, cat, climb}
}

func TestRanksAndClimbs(t *testing.T) {
	f := fixture()
	none := math.MinInt32
	for _, c := range []struct {
		s    views.Store
		id   string
		want [3]int // store rank, category rank, climb
	}{
		{views.Chrome, "g", [3]int{1, 1, none}}, // largest; no size a week ago
		{views.Chrome, "b", [3]int{2, 1, 1}},    // ties with c at 300: both 2nd; was 3rd (d 1000, a 500, b 100)
		{views.Chrome, "c", [3]int{2, 2, none}}, // shares b's rank; 2nd of its category after g
		{views.Chrome, "a", [3]int{4, 2, -2}},   // was 2nd
		{views.Chrome, "d", [3]int{0, 0, none}}, // delisted: unranked now, though ranked a week ago
		{views.Chrome, "e", [3]int{0, 0, none}}, // no size
		{views.Chrome, "f", [3]int{0, 0, none}}, // never read
		{views.Apple, "1", [3]int{1, 1, none}},  // apple's size is its rating count; the tie shares rank 1
		{views.Apple, "2", [3]int{1, 1, none}},
	} {
		if got := ranksOf(f, c.s, c.id); got != c.want {
			t.Errorf("%s/%s ranks %v, want %v", c.s, c.id, got, c.want)
		}
	}
}

func ids(ls []*views.Listing) []string {
	out := []string{}
	for _, l := range ls {
		out = append(out, l.ID)
	}
	return out
}

func TestCharts(t *testing.T) {
	f := fixture()
	for _, c := range []struct {
		key  ChartKey
		want []string
	}{
		{ChartKey{views.Chrome, ChartTop, ""}, []string{"g", "b", "c", "a"}},
		{ChartKey{views.Chrome, ChartTop, "X"}, []string{"b", "a"}},
		{ChartKey{views.Chrome, ChartTrending, ""}, []string{"g", "b"}}, // +1000, +100; a has +0
		{ChartKey{views.Chrome, ChartRising, ""}, []string{"g"}},        // b is below the 1,000 floor
		{ChartKey{views.Chrome, ChartNew, ""}, []string{"g"}},
		{ChartKey{views.Chrome, ChartTopRated, ""}, []string{"b"}}, // c has too few ratings
		{ChartKey{views.Chrome, ChartClimbers, ""}, []string{}},    // b climbed, below the 1,000 floor
		{ChartKey{views.Apple, ChartTop, "Games"}, []string{"1", "2"}},
		{ChartKey{views.Apple, ChartTrending, ""}, []string{}},
	} {
		if got := ids(f.Chart(c.key)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("chart %+v = %v, want %v", c.key, got, c.want)
		}
	}
	got := f.Positions(f.Replica().Lookup(views.Chrome, "b"))
	want := []ChartPos{{ChartTop, "", 2}, {ChartTrending, "", 2}, {ChartTopRated, "", 1},
		{ChartTop, "X", 1}, {ChartTrending, "X", 1}, {ChartTopRated, "X", 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("positions of b:\n got %v\nwant %v", got, want)
	}
}

// TestClimbersHaveAFloor: a listing going from 3 to 4 users passes every
// listing tied at 3, but below the floor of RisingMinSize it is no
// climber, nor first by growthpct7d; a large one is.
func TestClimbersHaveAFloor(t *testing.T) {
	climbed := func(from int64) func(*views.Listing) {
		return func(l *views.Listing) {
			l.Hist.SetClimbBase(views.Base{Value: from, At: at(-7*day - time.Hour)})
			l.Hist.SetSizeBase(views.Window7d, views.Base{Value: from, At: at(-7*day - time.Hour)})
		}
	}
	ls := []views.Listing{mk(views.Chrome, "tiny", "X", 4, climbed(3)), mk(views.Chrome, "big", "X", 5000, climbed(1000))}
	for i := range 20 {
		ls = append(ls, mk(views.Chrome, "t"+string(rune('a'+i)), "X", 3, climbed(3)))
		ls = append(ls, mk(views.Chrome, "m"+string(rune('a'+i)), "X", 2000, climbed(2000)))
	}
	f := Build(replica.New(ls, replica.Info{ReadingsMark: ref, ClimbAt: ref.Add(-7 * day), HasHistory: true}), 0)
	if got := ids(f.Chart(ChartKey{Store: views.Chrome, Chart: ChartClimbers})); !reflect.DeepEqual(got, []string{"big"}) {
		t.Errorf("climbers %v, want [big]: tiny climbed past 20 ties but is below the floor", got)
	}
	chrome := views.Chrome
	for _, sort := range []listq.Sort{listq.SortGrowthPct7d, listq.SortRankClimb} {
		page, _, _, _ := f.Listings().List(&listq.Query{Store: &chrome, Sort: sort, PageSize: 3}, nil)
		if got := ids(page); len(got) == 0 || got[0] != "big" {
			t.Errorf("sort %d: %v, want big first (tiny's climb and +33%% are below the floor)", sort, got)
		}
	}
}

func TestGrowth(t *testing.T) {
	f := fixture()
	b := f.Replica().Lookup(views.Chrome, "b")
	g, ok := b.SizeGrowth(views.Window7d)
	if !ok || g.Delta != 100 || g.Percent != 50 || g.Since != at(-time.Hour-7*day) || g.To != at(-time.Hour) {
		t.Errorf("b 7d growth %+v %v", g, ok)
	}
	if _, ok := b.SizeGrowth(views.Window1d); ok {
		t.Error("growth without a base reading")
	}
	zero := mk(views.Chrome, "z", "X", 5)
	zero.Hist.SetSizeBase(views.Window30d, views.Base{Value: 0, At: at(-31 * day)})
	if g, ok := zero.SizeGrowth(views.Window30d); !ok || g.Delta != 5 || !math.IsNaN(g.Percent) {
		t.Errorf("growth from a zero base %+v", g)
	}
	apple := f.Replica().Lookup(views.Apple, "1")
	apple.Hist.SetRatingBase(views.Window1d, views.Base{Value: 1, At: 1})
	if _, ok := apple.RatingGrowth(views.Window1d); ok {
		t.Error("apple has rating-count growth")
	}
}

// TestGrowthWindowsAreWhatTheySay: every window is exactly as long as its
// name, from its start to the newest reading, whatever readings its
// start's value comes from (views.ValueAt); a window is null for a
// listing that is not live; a chart of a window ranks every listing over
// the charts' window, not its own, and only listings with a size at both
// of its ends.
func TestGrowthWindowsAreWhatTheySay(t *testing.T) {
	read := at(-time.Hour)
	for _, w := range views.Windows {
		start := read - int64(w.Days())*86400
		for _, b := range []views.Base{{Value: 90, At: start}, {Value: 90, At: start - 3600, After: start + 7200}} {
			l := mk(views.Chrome, "x", "X", 100)
			l.Hist.SetSizeBase(w, b)
			g, ok := l.SizeGrowth(w)
			if !ok || g.Since != start || g.To != read || g.To-g.Since != int64(w.Days())*86400 || g.Delta != 10 || g.Interpolated() != (b.After != 0) {
				t.Errorf("%s from %+v: %+v %v, want a window of exactly %d days", w, b, g, ok, w.Days())
			}
			if w <= views.Window7d {
				l.SetRatingCount(100, true)
				l.Hist.SetRatingBase(w, b)
				if g, ok := l.RatingGrowth(w); !ok || g.Since != start || g.To != read {
					t.Errorf("rating %s from %+v: %+v %v", w, b, g, ok)
				}
			}
		}
	}
	gone := mk(views.Chrome, "g", "X", 100, base7(50), delisted(-day))
	if _, ok := gone.SizeGrowth(views.Window7d); ok {
		t.Error("a delisted listing has growth")
	}
	// Three risers. "old" was last read three days ago: no reading after
	// the chart's end, so no size there, and it is left out of the
	// trending chart. "own" grew 8,000 over its own week but 10 over the
	// chart's: it ranks after "now", which grew 1,000 over the chart's.
	ls := []views.Listing{mk(views.Chrome, "now", "X", 2000, base7(1000)), mk(views.Chrome, "old", "X", 9000, func(l *views.Listing) {
		l.ReadAt = at(-3 * day)
		l.Hist.SetSizeBase(views.Window7d, views.Base{Value: 1000, At: at(-10 * day)})
	}), mk(views.Chrome, "own", "X", 9000, func(l *views.Listing) {
		l.Hist.SetSizeBase(views.Window7d, views.Base{Value: 1000, At: at(-8 * day)})
		l.Hist.SetChartSizes(views.Base{Value: 8980}, true, views.Base{Value: 8990}, true)
	})}
	f := Build(replica.New(ls, replica.NewInfo(ref, ref)), 0)
	if got := ids(f.Chart(ChartKey{Store: views.Chrome, Chart: ChartTrending})); !reflect.DeepEqual(got, []string{"now", "own"}) {
		t.Errorf("trending %v, want now and own, by the chart's window", got)
	}
	if r, ok := f.RankedBy(ChartTrending, f.Replica().Lookup(views.Chrome, "own")); !ok || r.Change != 10 || r.To != views.DayOf(ref).Time().Add(-views.ChartLag).Unix() || r.To-r.From != 7*86400 {
		t.Errorf("own is ranked by %+v %v, want +10 over the chart's week", r, ok)
	}
	if g, ok := f.Replica().Lookup(views.Chrome, "old").SizeGrowth(views.Window7d); !ok || g.Delta != 8000 {
		t.Errorf("the listing read 3 days ago keeps its own 7d growth in its document: %+v %v", g, ok)
	}
}

func TestAggregates(t *testing.T) {
	f := fixture()
	st := f.Stats(views.Chrome)
	if st.Known != 7 || st.Live != 5 || st.Delisted != 1 || st.Pending != 1 || st.DelistedThisWeek != 1 ||
		st.NewThisWeek != 0 || st.TotalSize != 2700 || st.Rated != 2 || *st.AverageRating != 4.95 ||
		st.TotalSize7dAgo != 1600 || st.TotalSizeChange7d != 1100 || st.SizeMeasure != "users" {
		// a week ago: a 500, b 100 and d 1000 (delisted since) were live; g had no size
		t.Errorf("chrome stats %+v", st)
	}
	if want := []Share{{"<100", 0}, {"100-1K", 3}, {"1K-10K", 1}, {"10K-100K", 0}, {"100K-1M", 0}, {"1M+", 0}, {"none", 1}}; !reflect.DeepEqual(st.SizeBuckets, want) {
		t.Errorf("size buckets %v", st.SizeBuckets)
	}
	if want := []VersionShare{{2, 0}, {3, 0}}; !reflect.DeepEqual(st.ManifestVersions, want) {
		t.Errorf("manifest versions %v, want integers as Listing.manifestVersion", st.ManifestVersions)
	}
	if len(st.AccessLevels) != 4 || st.AccessLevels[0].AccessLevel != 1 || st.AccessLevels[3].AccessLevel != 4 {
		t.Errorf("access levels %v", st.AccessLevels)
	}
	cats := f.Categories(views.Chrome)
	var sizes int64
	for _, c := range cats {
		sizes += c.TotalSize
	}
	if len(cats) != 2 || cats[0].Name != "X" || cats[0].Listings != 2 || cats[1].Name != "Y" || cats[1].Listings != 3 || sizes != st.TotalSize {
		t.Errorf("chrome categories %+v: their sizes sum to %d, the store's %d", cats, sizes, st.TotalSize)
	}
	if got := f.AllCategories(); !reflect.DeepEqual(got, []CategoryCount{{Name: "Games", Listings: 2}, {Name: "X", Listings: 2}, {Name: "Y", Listings: 3}}) {
		t.Errorf("all categories %v", got)
	}
	if got := f.Permissions(); !reflect.DeepEqual(got, []PermissionCount{{"storage", 2}, {"tabs", 1}}) {
		t.Errorf("permissions %v", got)
	}
	if ls, ok := f.TopicListings("privacy", views.Chrome); !ok || !reflect.DeepEqual(ids(ls), []string{"g", "a"}) {
		t.Errorf("privacy topic %v", ids(ls))
	}
	if _, ok := f.TopicListings("nope", views.Chrome); ok {
		t.Error("unknown topic found")
	}
	s := f.Summary()
	if s.Known != 9 || s.Crawled != 8 || s.Live != 7 || s.Delisted != 1 || s.Pending != 1 || s.Rated != 2 ||
		s.NoVersionKey != 1 || s.Snapshots != 1234 || len(s.Platforms) != 5 || len(s.Years) != 9 ||
		s.Years[0] != (YearCount{2026, 7}) || s.Cats[0] != (SummaryCategory{"Y", 3, 2}) {
		t.Errorf("summary %+v", s)
	}
	// Usage buckets: apple's listings have no usage figure.
	if s.Buckets[6].N != 3 || s.Buckets[1].N != 3 {
		t.Errorf("summary buckets %v", s.Buckets)
	}
}
