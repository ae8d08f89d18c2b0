package links

import (
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

func TestNormalNameAndDeveloper(t *testing.T) {
	for in, want := range map[string]string{
		"Dark Reader":                    "dark reader",
		"Dark Reader for Firefox":        "dark reader",
		"dark-reader - Chrome Extension": "dark reader",
		"Dark Reader (Microsoft Edge)":   "dark reader",
		"Add-on":                         "",
		"uBlock₀ Origin!":                "ublock origin",
		"AB":                             "",
	} {
		if got := NormalName(in); got != want {
			t.Errorf("NormalName(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"Acme Labs Inc.": "acme labs", "ACME LABS": "acme labs", "Acme Labs, GmbH": "acme labs", "Co.": ""} {
		if got := NormalDeveloper(in); got != want {
			t.Errorf("NormalDeveloper(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLinks(t *testing.T) {
	r := replicatest.Twins(500)
	f := Build(r)
	links := func(s views.Store, id string) map[string]float64 {
		out := map[string]float64{}
		for _, k := range f.Of(r.Index(r.Lookup(s, id))) {
			o := r.At(k.Index)
			out[o.Store.String()+"/"+o.ID] = k.Confidence
		}
		return out
	}
	got := links(views.Chrome, "twin-chrome")
	if len(got) != 2 || got["edge/twin-edge"] < LinkThreshold || got["firefox/twin-firefox"] < LinkThreshold {
		t.Errorf("chrome twin: %v, want its edge and firefox twins", got)
	}
	if got := links(views.Edge, "twin-edge"); len(got) != 2 || got["chrome/twin-chrome"] == 0 || got["firefox/twin-firefox"] == 0 {
		t.Errorf("edge twin: %v", got)
	}
	for _, id := range []string{"decoy", "tie-chrome"} {
		if got := links(views.Chrome, id); len(got) != 0 {
			t.Errorf("%s linked to %v", id, got)
		}
	}
	if s := LinkScore(r.Lookup(views.Chrome, "twin-chrome"), r.Lookup(views.Chrome, "decoy")); s >= LinkThreshold || s < NameWeight {
		t.Errorf("decoy scores %v", s)
	}
}
