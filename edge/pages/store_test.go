package pages

import (
	"testing"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
)

// TestStepOf: a week's step of a store's total size names the listing
// that makes most of it, the same way, as a newcomer, a departure or a
// gainer; a step nothing explains is only its change.
func TestStepOf(t *testing.T) {
	n := func(v int64) *int64 { return &v }
	se := &editions.StoreEdition{
		Newcomers:  []editions.Entry{{ID: "pdf", Name: "Easy PDF", Size: n(1_090_000)}, {ID: "s", Name: "Small", Size: n(500)}},
		Departures: []editions.Entry{{ID: "gone", Name: "Gone Big", Size: n(800_000)}},
		Gainers:    []editions.Entry{{ID: "g", Name: "Grower", Change: n(600_000)}},
	}
	for _, c := range []struct {
		name   string
		change int64
		want   string
	}{
		{"a newcomer makes the rise", 1_092_432, "+1,092,432, most of it Easy PDF (new, at 1,090,000)"},
		{"a departure makes the fall", -900_000, "−900,000, most of it Gone Big (gone, from 800,000)"},
		{"a gainer makes the rise", 1_400_000, "+1,400,000, most of it Easy PDF (new, at 1,090,000)"},
		{"nothing makes 40% of it", 5_000_000, "+5,000,000"},
		{"the fall no riser explains", -5_000_000, "−5,000,000"},
	} {
		if got := stepText(stepOf(views.Chrome, se, c.change)); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	gainer := &editions.StoreEdition{Gainers: []editions.Entry{{ID: "g/1", Name: "Grower", Change: n(600_000)}}}
	if got := stepOf(views.Edge, gainer, 700_000); stepText(got) != "+700,000, most of it Grower (grew by 600,000)" || got.URL != "/listings/edge/g%2F1" {
		t.Errorf("a gainer: %+v", got)
	}
}

// stepText is a step as its page says it, links aside.
func stepText(s *render.Step) string {
	if s.Name == "" {
		return s.Change
	}
	return s.Change + ", most of it " + s.Name + " (" + s.How + ")"
}
