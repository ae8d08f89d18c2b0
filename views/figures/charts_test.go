package figures

import (
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/viewstest"
)

// TestChartsAsTheirRules checks the one-pass charts of every store and
// category, and how many listings each considered, against each chart's
// rule applied on its own (chartsOracle: a pass per chart, a comparison
// sort), over a synthetic replica with the stores' real shares.
func TestChartsAsTheirRules(t *testing.T) {
	for k, c := range Charts {
		if c != [...]string{cTop: ChartTop, cTrending: ChartTrending, cRising: ChartRising, cNew: ChartNew, cTopRated: ChartTopRated, cClimbers: ChartClimbers}[k] {
			t.Fatalf("Charts[%d] is %s: the chart indexes are out of its order", k, c)
		}
	}
	r := replicatest.Synth(40_000, viewstest.RealShares)
	// Synth's listings have no sizes at the charts' window: give most of
	// them one, growing, shrinking or flat, from none up.
	ls := r.All()
	for i := range ls {
		if size, ok := ls[i].Size(); ok && i%5 != 0 {
			ls[i].Hist.SetChartSizes(views.Base{Value: size * int64(90+i%21) / 100}, true, views.Base{Value: size}, true)
		}
	}
	f := Build(r, 0)
	charts, entries := 0, 0
	for _, s := range views.Stores {
		lo, hi := r.StoreRange(s)
		n := r.Len()
		scratch := &Figures{replica: r, storeRank: make([]int32, n), catRank: make([]int32, n), climb: make([]int32, n), hasClimb: make([]bool, n)}
		want := chartsOracle(f, s, lo, hi, scratch.rankStore(lo, hi))
		for k, idx := range want.charts {
			if got := f.charts[k]; !reflect.DeepEqual(got, idx) {
				t.Errorf("%v: %d entries %v..., want %d %v...", k, len(got), head(got), len(idx), head(idx))
			}
			charts++
			entries += len(idx)
		}
		for k, n := range want.considered {
			if got := f.Considered(k); got != n {
				t.Errorf("%v considered %d, want %d", k, got, n)
			}
		}
		for k := range f.charts {
			if _, ok := want.charts[k]; !ok && k.Store == s {
				t.Errorf("%v: a chart its rule does not make", k)
			}
		}
	}
	// Every chart kind has entries, or the comparison says little.
	for _, c := range Charts {
		if len(f.charts[ChartKey{views.Chrome, c, ""}]) == 0 {
			t.Errorf("chrome's %s chart is empty on the synthetic replica", c)
		}
	}
	t.Logf("%d charts, %d entries", charts, entries)
}

func head(idx []int32) []int32 { return idx[:min(len(idx), 5)] }

// chartsOracle is each chart's rule on its own: one pass over the store
// a chart, and a comparison sort.
func chartsOracle(f *Figures, s views.Store, lo, hi int, byRank []ranked) storeCharts {
	ls := f.replica.All()
	out := storeCharts{charts: map[ChartKey][]int32{}, considered: map[ChartKey]int{}}
	consider := func(chart string, l *views.Listing) {
		out.considered[ChartKey{s, chart, ""}]++
		out.considered[ChartKey{s, chart, l.Category}]++
	}
	newSince := f.replica.Info().ReadingsMark.Add(-NewDays * 24 * time.Hour).Unix()
	from, to := f.replica.Info().ChartWindow()
	for _, chart := range Charts {
		var items []ranked
		if chart == ChartTop {
			items = byRank
			for _, it := range byRank {
				consider(chart, &ls[it.idx])
			}
		}
		for i := lo; i < hi && chart != ChartTop; i++ {
			l := &ls[i]
			if !l.Live() {
				continue
			}
			size, hasSize := l.Size()
			switch chart {
			// The charts of a window rank every listing over the same two
			// instants (docs/figures.md, Charts).
			case ChartTrending:
				g, ok := l.ChartGrowth(from, to)
				if ok {
					consider(chart, l)
				}
				if ok && g.Delta > 0 {
					items = append(items, ranked{key: g.Delta, key2: size, idx: int32(i)})
				}
			case ChartRising:
				// Ranked by the percent as published (two decimals), then
				// size: an entry's order can be read from its figures.
				g, ok := l.ChartGrowth(from, to)
				if !ok || size < views.RisingMinSize(s) || math.IsNaN(g.Percent) {
					continue
				}
				consider(chart, l)
				if hundredths := int64(math.Round(g.Percent * 100)); hundredths > 0 {
					items = append(items, ranked{key: hundredths, key2: size, idx: int32(i)})
				}
			case ChartNew:
				// Every listing first seen in the window: a new app not
				// rated yet is new too (it comes after the sized ones).
				if l.FirstSeen >= newSince {
					consider(chart, l)
					if !hasSize {
						size = -1
					}
					items = append(items, ranked{key: size, idx: int32(i)})
				}
			case ChartTopRated:
				rating, rated := l.Rating()
				count, _ := l.RatingCount()
				if rated && count >= TopRatedMinRatings {
					consider(chart, l)
					items = append(items, ranked{key: int64(math.Round(views.RoundRating(rating) * 100)), key2: count, idx: int32(i)})
				}
			case ChartClimbers:
				if f.hasClimb[i] && size >= views.RisingMinSize(s) {
					consider(chart, l)
				}
				if f.hasClimb[i] && f.climb[i] > 0 && size >= views.RisingMinSize(s) {
					// Ties go to the better current rank.
					items = append(items, ranked{key: int64(f.climb[i]), key2: -int64(f.storeRank[i]), idx: int32(i)})
				}
			}
		}
		if chart != ChartTop {
			sortRankedCompare(items)
		}
		perCat := map[string][]int32{}
		var whole []int32
		for _, it := range items {
			if len(whole) < ChartSize {
				whole = append(whole, it.idx)
			}
			cat := ls[it.idx].Category
			if len(perCat[cat]) < ChartSize {
				perCat[cat] = append(perCat[cat], it.idx)
			}
		}
		if len(whole) > 0 {
			out.charts[ChartKey{s, chart, ""}] = whole
		}
		for cat, idx := range perCat {
			out.charts[ChartKey{s, chart, cat}] = idx
		}
	}
	return out
}
