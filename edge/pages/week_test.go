package pages

import (
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/views/editions"
)

// TestWeekNeighbours: an edition's page links the editions just before
// and after it (weeks without an edition skipped), and jumps to each of
// its stores' parts.
func TestWeekNeighbours(t *testing.T) {
	var es []*editions.Edition
	for _, w := range []string{"2026-W03", "2026-W05", "2026-W06", "2026-W08"} {
		es = append(es, &editions.Edition{Week: w})
	}
	set, err := editions.NewSet(nil, es...)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ week, prev, next string }{
		{"2026-W03", "", "2026-W05"},
		{"2026-W05", "2026-W03", "2026-W06"},
		{"2026-W06", "2026-W05", "2026-W08"},
		{"2026-W08", "2026-W06", ""},
	} {
		prev, next := neighbours(set, tc.week)
		label := func(l *render.Link) string {
			if l == nil {
				return ""
			}
			if l.URL != "/week/"+strings.TrimPrefix(l.Label, "Week ") {
				t.Errorf("%s: link %+v", tc.week, l)
			}
			return strings.TrimPrefix(l.Label, "Week ")
		}
		if p, n := label(prev), label(next); p != tc.prev || n != tc.next {
			t.Errorf("%s: before %q, after %q; want %q and %q", tc.week, p, n, tc.prev, tc.next)
		}
	}
	prev, next := neighbours(set, "2026-W05")
	body, err := render.RenderWeek(render.WeekPage{Week: "2026-W05", Prev: prev, Next: next,
		Stores: []render.WeekStore{{Store: "chrome"}, {Store: "apple"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`<a href="/week/2026-W03" rel="prev">`, `<a href="/week/2026-W06" rel="next">`,
		`<a href="#chrome">chrome</a>`, `<a href="#apple">apple</a>`, `<h2 id="apple">`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the edition's page lacks %s", want)
		}
	}
}
