package editions

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
)

func date(s string) views.Day {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return views.DayOf(t)
}

func TestISOWeeks(t *testing.T) {
	for _, c := range []struct {
		id           string
		start, last  string
		prev, next   string
		containsDays []string
	}{
		{"2026-W53", "2026-12-28", "2027-01-03", "2026-W52", "2027-W01", []string{"2026-12-31", "2027-01-01", "2027-01-03"}},
		{"2027-W01", "2027-01-04", "2027-01-10", "2026-W53", "2027-W02", []string{"2027-01-04"}},
		{"2026-W01", "2025-12-29", "2026-01-04", "2025-W52", "2026-W02", []string{"2025-12-31", "2026-01-01"}},
		{"2020-W53", "2020-12-28", "2021-01-03", "2020-W52", "2021-W01", []string{"2021-01-01"}},
		{"2026-W10", "2026-03-02", "2026-03-08", "2026-W09", "2026-W11", []string{"2026-03-05"}},
	} {
		w, err := ParseWeek(c.id)
		if err != nil {
			t.Fatalf("%s: %v", c.id, err)
		}
		if w.String() != c.id || w.Start().String() != c.start || w.Last().String() != c.last ||
			w.Prev().String() != c.prev || w.Next().String() != c.next {
			t.Errorf("%s: start %s last %s prev %s next %s", c.id, w.Start(), w.Last(), w.Prev(), w.Next())
		}
		if !w.End().Equal((date(c.last) + 1).Time()) {
			t.Errorf("%s ends %v", c.id, w.End())
		}
		for _, d := range c.containsDays {
			if got := WeekOf(date(d)); got != w {
				t.Errorf("day %s is in %s, want %s", d, got, w)
			}
		}
	}
	for _, bad := range []string{"2027-W53", "2026-W00", "2026-W54", "2026-W5", "26-W05", "2026W05", "2026-w05", "", "2026-W05 "} {
		if _, err := ParseWeek(bad); err == nil {
			t.Errorf("ParseWeek(%q) accepted", bad)
		}
	}
	if WeeksIn(2026) != 53 || WeeksIn(2027) != 52 || WeeksIn(2020) != 53 {
		t.Error("weeks per year")
	}
}

// weekListing returns a maker of listings of store s, found and read long
// before the week that starts at start, each with its id, size and options.
func weekListing(s views.Store, start time.Time) func(string, int64, ...func(*Listing)) Listing {
	old := start.Add(-100 * 24 * time.Hour).Unix()
	return func(id string, size int64, o ...func(*Listing)) Listing {
		l := Listing{Store: s, ID: id, Name: id, Category: "X", FirstSeen: old, ReadAt: old + 1, Size: size, HasSize: true}
		for _, f := range o {
			f(&l)
		}
		return l
	}
}

func TestBuildEdition(t *testing.T) {
	w, _ := ParseWeek("2026-W10") // Monday 2026-03-02 to Sunday 2026-03-08
	start, end := w.Start().Time(), w.End()
	mid := start.Add(72 * time.Hour).Unix()
	wl := weekListing(views.Chrome, start)
	prev := &State{At: start, Listings: []Listing{wl("a", 100), wl("b", 200), wl("c", 50), wl("e", 80)}}
	cur := &State{At: end, Listings: []Listing{
		wl("a", 300), wl("b", 200), wl("c", 60),
		wl("d", 250, func(l *Listing) { l.FirstSeen, l.Rated, l.Rating, l.RatingCount = mid, true, 4.5, 20 }),
		wl("e", 80, func(l *Listing) { l.Delisted = mid }),
	}}
	e := Build(w, cur, prev)
	if e.Week != "2026-W10" || e.Start != "2026-03-02" || e.Last != "2026-03-08" || !e.Cutoff.Equal(end) || len(e.Stores) != 5 {
		t.Fatalf("edition header %+v", e)
	}
	c := e.Stores["chrome"]
	if want := (Totals{Live: 4, LiveChange: 0, TotalSize: 810, TotalSizeChange: 380, Newcomers: 1, Departures: 1}); c.Totals != want {
		t.Errorf("totals %+v, want %+v", c.Totals, want)
	}
	idsOf := func(es []Entry) []string {
		out := []string{}
		for _, e := range es {
			out = append(out, e.ID)
		}
		return out
	}
	for name, got := range map[string][]Entry{"climbers": c.TopClimbers, "gainers": c.Gainers,
		"pct": c.GainersPercent, "new": c.Newcomers, "gone": c.Departures, "rated": c.BestRatedNewcomers} {
		want := map[string][]string{"climbers": {}, "gainers": {"a", "c"}, "pct": {}, "new": {"d"},
			"gone": {"e"}, "rated": {"d"}}[name]
		if !reflect.DeepEqual(idsOf(got), want) {
			t.Errorf("%s: %v, want %v", name, idsOf(got), want)
		}
	}
	a := c.Gainers[0] // a climbed too, but below the floor of topClimbers
	if *a.Rank != 1 || *a.PreviousRank != 2 || *a.Change != 200 || *a.Percent != 200 {
		t.Errorf("climber a %+v", a)
	}
	if d := c.Newcomers[0]; d.PreviousRank != nil || d.Change != nil || *d.Rank != 2 {
		t.Errorf("newcomer d %+v", d)
	}
	if again := Build(w, cur, prev); !reflect.DeepEqual(again, e) {
		t.Error("building the same edition twice differs")
	}
	if es := e.Stores["apple"]; len(es.Gainers) != 0 || es.Totals.Live != 0 || es.Gainers == nil {
		t.Errorf("empty store %+v", es)
	}
}

// TestEditionLiveIsTheStatisticsLive: live is read and not delisted, with
// or without a size (an unrated apple app is live); a listing never read
// is never a departure, even delisted; one read for the first time, or
// relisted, this week returns; liveChange adds up from its parts.
func TestEditionLiveIsTheStatisticsLive(t *testing.T) {
	w, _ := ParseWeek("2026-W10")
	start, end := w.Start().Time(), w.End()
	mid := start.Add(72 * time.Hour).Unix()
	wl := weekListing(views.Apple, start)
	unrated := func(l *Listing) { l.HasSize, l.Size = false, 0 }
	neverRead := func(l *Listing) { l.ReadAt = 0 }
	prev := &State{At: start, Listings: []Listing{
		wl("a", 100), wl("u", 0, unrated), wl("n", 0, unrated, neverRead), wl("g", 50), wl("r", 0, unrated, neverRead),
	}}
	cur := &State{At: end, Listings: []Listing{
		wl("a", 110), wl("u", 0, unrated),
		wl("n", 0, unrated, neverRead, func(l *Listing) { l.Delisted = mid }), // found, never read, now gone
		wl("g", 50, func(l *Listing) { l.Delisted = mid }),                    // read, now gone: a departure
		wl("r", 30), // found long ago, read this week
		wl("d", 5, func(l *Listing) { l.FirstSeen = mid }), // new this week
	}}
	for _, st := range []*State{prev, cur} { // states are sorted by store and id
		slices.SortFunc(st.Listings, func(a, b Listing) int { return strings.Compare(a.ID, b.ID) })
	}
	tot := Build(w, cur, prev).Stores["apple"].Totals
	want := Totals{Live: 4, LiveChange: 1, TotalSize: 145, TotalSizeChange: -5, Newcomers: 1, Returning: 1, Departures: 1}
	if tot != want {
		t.Fatalf("totals %+v, want %+v", tot, want)
	}
	if tot.LiveChange != tot.Newcomers+tot.Returning-tot.Departures {
		t.Fatal("liveChange does not add up")
	}
	deps := Build(w, cur, prev).Stores["apple"].Departures
	if len(deps) != 1 || deps[0].ID != "g" {
		t.Fatalf("departures %+v, want g alone (n was never read)", deps)
	}
}
