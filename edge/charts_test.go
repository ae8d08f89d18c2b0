package edge_test

import (
	"cmp"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

type chartPage struct {
	Entries []struct {
		Position int
		Listing  struct{ Store, ID string }
	}
}

// chartKeys are what a chart ranks a listing by, in the order
// docs/figures.md gives for it: larger first, each key breaking the ties
// of the one before, then the id (A to Z).
func chartKeys(f *figures.Figures, l *views.Listing, chart string) []float64 {
	size, hasSize := l.Size()
	switch chart {
	case figures.ChartTop:
		return []float64{float64(size)}
	case figures.ChartTrending:
		g, _ := f.RankedBy(chart, l)
		return []float64{float64(g.Change), float64(size)}
	case figures.ChartRising:
		g, _ := f.RankedBy(chart, l)
		return []float64{math.Round(g.Percent * 1e6), float64(size)}
	case figures.ChartNew:
		if !hasSize {
			return []float64{-1}
		}
		return []float64{float64(size)}
	case figures.ChartTopRated:
		r, _ := l.Rating()
		n, _ := l.RatingCount()
		return []float64{math.Round(views.RoundRating(r) * 100), float64(n)}
	case figures.ChartClimbers:
		rank, _, climb, _ := f.Ranks(l)
		return []float64{float64(climb), -float64(rank)}
	}
	panic(chart)
}

// TestChartsFollowTheirRules asks every chart of every store and checks
// the order of each adjacent pair of entries against the chart's rule,
// ties included (docs/figures.md, Charts), and that the new chart holds
// every live listing first seen in its 30 days, sized or not, as the
// store's statistics and the weekly editions count them.
func TestChartsFollowTheirRules(t *testing.T) {
	h := start(t, seeded(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	st := h.State.Load()
	f := st.Figures
	ties := 0
	for _, s := range views.Stores {
		for _, chart := range figures.Charts {
			p := getOK[chartPage](t, h.Base+"/api/v1/charts/"+s.String()+"?chart="+chart)
			for i := 1; i < len(p.Entries); i++ {
				a, b := st.Replica.Lookup(s, p.Entries[i-1].Listing.ID), st.Replica.Lookup(s, p.Entries[i].Listing.ID)
				ka, kb := chartKeys(f, a, chart), chartKeys(f, b, chart)
				c := 0
				for k := range ka {
					if c = cmp.Compare(kb[k], ka[k]); c != 0 {
						break
					}
				}
				if c == 0 {
					ties++
					c = strings.Compare(a.ID, b.ID)
				}
				if c > 0 {
					t.Errorf("%s %s: %s (%v) before %s (%v)", s, chart, a.ID, ka, b.ID, kb)
				}
			}
			if chart != figures.ChartNew {
				continue
			}
			since := st.Replica.Info().ReadingsMark.Add(-figures.NewDays * 24 * time.Hour).Unix()
			want := 0
			for _, l := range st.Replica.OfStore(s) {
				if l.Live() && l.FirstSeen >= since {
					want++
				}
			}
			if got := len(p.Entries); got != min(want, figures.ChartSize) {
				t.Errorf("%s new: %d entries, want every live listing first seen in %d days (%d)", s, got, figures.NewDays, want)
			}
		}
	}
	if ties == 0 {
		t.Fatal("no tie in any chart: the dataset no longer tests the tie rules")
	}
}
