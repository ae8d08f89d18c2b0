package edge_test

import (
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// windowChart is a chart answer of a window: its instants and each
// entry's figure.
type windowChart struct {
	From, To *time.Time
	Entries  []struct {
		Position int
		From, To *time.Time
		Change   *int64
		Percent  *float64
		Climb    *int
		Listing  struct {
			Store, ID   string
			RankClimb7d *int
		}
	}
}

// instantGrowthJSON is /growth's answer between two instants.
type instantGrowthJSON struct {
	From, To time.Time
	Seconds  int64
	Start    struct {
		At           time.Time
		Readings     []time.Time
		Interpolated bool
		Size         *int64
	}
	End struct {
		At       time.Time
		Readings []time.Time
		Size     *int64
	}
	Change struct {
		Size *struct {
			Change  float64
			Percent *float64
		}
	}
}

// growthKey is one question to /growth: a listing between two ends.
type growthKey struct {
	store, id, from, to string
}

// askGrowth asks /growth for every key, eight at a time, and returns
// each answer's size change (nil when null).
func askGrowth(t *testing.T, base string, keys map[growthKey]bool) map[growthKey]*float64 {
	t.Helper()
	var (
		mu  sync.Mutex
		out = map[growthKey]*float64{}
		wg  sync.WaitGroup
		ch  = make(chan growthKey)
	)
	for range 8 {
		wg.Go(func() {
			for k := range ch {
				u := fmt.Sprintf("%s/api/v1/listings/%s/%s/growth?from=%s&to=%s", base, k.store, url.PathEscape(k.id), url.QueryEscape(k.from), url.QueryEscape(k.to))
				a := get(t, "GET", u)
				var g struct {
					Change struct{ Size *struct{ Change float64 } }
				}
				if a.status != 200 || json.Unmarshal(a.body, &g) != nil {
					t.Errorf("%s: %d %s", u, a.status, a.body)
					continue
				}
				mu.Lock()
				if g.Change.Size != nil {
					out[k] = &g.Change.Size.Change
				} else {
					out[k] = nil
				}
				mu.Unlock()
			}
		})
	}
	for k := range keys {
		ch <- k
	}
	close(ch)
	wg.Wait()
	return out
}

// TestChartEntriesMatchGrowth asks every chart of a window (trending,
// rising, climbers) of every store and of each of its categories, and
// every weekly edition: every entry carries the figure it was ranked by
// between the chart's two instants, the same for every entry, and that
// change equals /growth between those instants (or, for an edition, its
// two dates) for the listing; a climb equals the listing's document.
func TestChartEntriesMatchGrowth(t *testing.T) {
	h := start(t, seeded(t))
	for _, job := range []string{"views", "editions"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	st := h.State.Load()
	info := st.Replica.Info()
	wantTo := views.DayOf(info.ReadingsMark).Time().Add(-views.ChartLag) // the start of the data's day, three days back
	wantFrom := wantTo.Add(-views.ChartDays * 24 * time.Hour)

	type entryFigure struct {
		where  string
		change int64
	}
	asked := map[growthKey][]entryFigure{}
	entries := 0
	for _, s := range views.Stores {
		var cats []string
		for _, c := range st.Figures.Categories(s) {
			cats = append(cats, c.Name)
		}
		for _, chart := range []string{figures.ChartTrending, figures.ChartRising, figures.ChartClimbers} {
			for _, cat := range append([]string{""}, cats...) {
				u := h.Base + "/api/v1/charts/" + s.String() + "?chart=" + chart
				if cat != "" {
					u += "&category=" + url.QueryEscape(cat)
				}
				c := getOK[windowChart](t, u)
				from, to := wantFrom, wantTo
				if chart == figures.ChartClimbers {
					from, to = info.ClimbAt, info.ReadingsMark
				}
				if c.From == nil || c.To == nil || !c.From.Equal(from) || !c.To.Equal(to) {
					t.Fatalf("%s: from %v to %v, want %v to %v", u, c.From, c.To, from, to)
				}
				for _, e := range c.Entries {
					entries++
					where := fmt.Sprintf("%s #%d %s", u, e.Position, e.Listing.ID)
					if e.From == nil || e.To == nil || !e.From.Equal(from) || !e.To.Equal(to) {
						t.Errorf("%s: entry from %v to %v, want the chart's", where, e.From, e.To)
						continue
					}
					if chart == figures.ChartClimbers {
						if e.Climb == nil || *e.Climb <= 0 || e.Listing.RankClimb7d == nil || *e.Climb != *e.Listing.RankClimb7d {
							t.Errorf("%s: climb %v, document's %v", where, e.Climb, e.Listing.RankClimb7d)
						}
						continue
					}
					// A percent is null where the size at from is 0.
					if e.Change == nil || *e.Change <= 0 || (chart == figures.ChartRising && e.Percent == nil) || (e.Percent != nil && *e.Percent <= 0) {
						t.Errorf("%s: change %v percent %v; a chart of growth ranks positive figures", where, e.Change, e.Percent)
						continue
					}
					k := growthKey{s.String(), e.Listing.ID, from.Format(time.RFC3339), to.Format(time.RFC3339)}
					asked[k] = append(asked[k], entryFigure{where, *e.Change})
				}
			}
		}
	}
	weeks := getOK[struct{ Weeks []struct{ Week string } }](t, h.Base+"/api/v1/weeks")
	for _, ref := range weeks.Weeks {
		w := ref.Week
		e := getOK[struct {
			ChangeFrom, ChangeTo string
			Stores               map[string]struct {
				Gainers, GainersPercent []struct {
					ID     string
					Change *int64
				}
			}
		}](t, h.Base+"/api/v1/week/"+w)
		for s, se := range e.Stores {
			for _, g := range append(se.Gainers, se.GainersPercent...) {
				entries++
				where := fmt.Sprintf("edition %s %s gainer %s", w, s, g.ID)
				if g.Change == nil {
					t.Errorf("%s: no change", where)
					continue
				}
				k := growthKey{s, g.ID, e.ChangeFrom, e.ChangeTo}
				asked[k] = append(asked[k], entryFigure{where, *g.Change})
			}
		}
	}
	if entries < 200 {
		t.Fatalf("only %d entries in the charts of a window and the editions: the dataset no longer tests them", entries)
	}
	keys := map[growthKey]bool{}
	for k := range asked {
		keys[k] = true
	}
	got := askGrowth(t, h.Base, keys)
	for k, figs := range asked {
		for _, f := range figs {
			if g := got[k]; g == nil || *g != float64(f.change) {
				t.Errorf("%s: change %d, /growth from %s to %s says %v", f.where, f.change, k.from, k.to, g)
			}
		}
	}
	t.Logf("%d entries, %d questions to /growth", entries, len(keys))
}

// TestGrowthBetweenInstants checks /growth with RFC 3339 instants: from
// one window before a listing's newest reading (to defaults to it) it
// gives the window of the listing's document, for every window of every
// live chrome listing; and it refuses what it cannot answer.
func TestGrowthBetweenInstants(t *testing.T) {
	h := start(t, seeded(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	st := h.State.Load()
	checked, interpolated := 0, 0
	for _, l := range st.Replica.OfStore(views.Chrome) {
		if !l.Live() {
			continue
		}
		base := h.Base + "/api/v1/listings/chrome/" + url.PathEscape(l.ID) + "/growth"
		for _, w := range views.Windows[:3] {
			want, ok := l.SizeGrowth(w)
			from := time.Unix(l.ReadAt-int64(w.Days())*86400, 0).UTC()
			g := getOK[instantGrowthJSON](t, base+"?from="+url.QueryEscape(from.Format(time.RFC3339)))
			where := fmt.Sprintf("%s %s", l.ID, w)
			if !g.From.Equal(from) || g.To.Unix() != l.ReadAt || g.Seconds != int64(w.Days())*86400 {
				t.Errorf("%s: from %s to %s (%d s), want %s to the newest reading", where, g.From, g.To, g.Seconds, from)
			}
			if !ok {
				if g.Change.Size != nil {
					t.Errorf("%s: the document has no window, /growth says %+v", where, g.Change.Size)
				}
				continue
			}
			checked++
			if g.Change.Size == nil || g.Change.Size.Change != float64(want.Delta) || g.Start.Size == nil || *g.Start.Size != want.Base.Value {
				t.Errorf("%s: /growth %+v from %v, the document %d from %d", where, g.Change.Size, g.Start.Size, want.Delta, want.Base.Value)
				continue
			}
			if g.Start.Interpolated != want.Interpolated() || g.Start.Readings[0].Unix() != want.Base.At {
				t.Errorf("%s: start readings %v (interpolated %v), the document's from %d", where, g.Start.Readings, g.Start.Interpolated, want.Base.At)
			}
			if want.Interpolated() {
				interpolated++
			}
			if !math.IsNaN(want.Percent) {
				if p := g.Change.Size.Percent; p == nil || math.Abs(*p-math.Round(want.Percent*100)/100) > 0.005 {
					t.Errorf("%s: percent %v, want %.2f", where, p, want.Percent)
				}
			}
		}
	}
	if checked < 100 || interpolated == 0 {
		t.Fatalf("%d windows checked, %d interpolated: the dataset no longer tests the rule", checked, interpolated)
	}

	l := firstLive(t, h, views.Chrome)
	base := h.Base + "/api/v1/listings/chrome/" + url.PathEscape(l.ID) + "/growth"
	newest := st.Replica.Info().ReadingsMark
	for q, want := range map[string]string{
		"?from=2026-02-20&to=" + url.QueryEscape(newest.Format(time.RFC3339)): "both as dates",
		"?from=2026-02-20T25:00:00Z":                                          "neither a date nor an instant",
		"?from=2026-02-20T10:00:00":                                           "neither a date nor an instant",
		"?from=" + url.QueryEscape(newest.Format(time.RFC3339)) + "&to=" + url.QueryEscape(newest.Add(time.Second).Format(time.RFC3339)): "newest reading",
		"?from=" + url.QueryEscape(newest.Format(time.RFC3339)) + "&to=" + url.QueryEscape(newest.Add(-time.Hour).Format(time.RFC3339)):  "after to",
		"?from=" + url.QueryEscape(newest.Add(-800*24*time.Hour).Format(time.RFC3339)):                                                   "730",
	} {
		if d := problem(t, get(t, "GET", base+q), 400); !strings.Contains(d, want) {
			t.Errorf("%s: %q, want it to say %q", q, d, want)
		}
	}
	// An offset other than Z names the same instant.
	at := newest.Add(-3 * 24 * time.Hour)
	z := getOK[instantGrowthJSON](t, base+"?from="+url.QueryEscape(at.Format(time.RFC3339)))
	plus := getOK[instantGrowthJSON](t, base+"?from="+url.QueryEscape(at.In(time.FixedZone("", 5*3600)).Format(time.RFC3339)))
	if !z.From.Equal(plus.From) || (z.Change.Size == nil) != (plus.Change.Size == nil) || (z.Change.Size != nil && z.Change.Size.Change != plus.Change.Size.Change) {
		t.Errorf("the same instant in two offsets: %+v and %+v", z, plus)
	}
}
