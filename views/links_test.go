package views

import (
	"slices"
	"testing"
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

// linkTestReplica holds synthetic listings and, from index base on, a
// twin set: the same extension in three stores with small differences, a
// decoy of the same name by another developer, and two equally good edge
// candidates for one chrome listing (which must link neither).
func linkTestReplica(n int) *Replica {
	r := synthReplica(n)
	ls := r.All()
	desc := "Dark Reader helps you read web pages at night. Open source and free forever."
	add := func(s Store, id, name, dev, d string) {
		l := Listing{Store: s, ID: id, Name: name, Developer: dev, Description: d, ReadAt: ls[0].ReadAt, FirstSeen: ls[0].FirstSeen}
		l.SetUsage(1000, true)
		ls = append(ls, l)
	}
	add(Chrome, "twin-chrome", "Dark Reader", "Alexander Shutau", desc)
	add(Edge, "twin-edge", "Dark Reader for Edge", "Alexander Shutau Inc.", desc+" Now on Edge.")
	add(Firefox, "twin-firefox", "Dark Reader", "alexander shutau", "Dark Reader helps you read web pages at night. Open source.")
	add(Chrome, "decoy", "Dark Reader", "Someone Else", "Dark Reader helps you block annoying ads. Works offline.")
	add(Chrome, "tie-chrome", "Quick Notes", "Acme", "Quick Notes keeps your notes.")
	add(Edge, "tie-edge-1", "Quick Notes", "Acme", "Quick Notes keeps your notes.")
	add(Edge, "tie-edge-2", "Quick Notes", "Acme", "Quick Notes keeps your notes.")
	return NewReplica(ls, r.Info())
}

func TestLinks(t *testing.T) {
	f := Build(linkTestReplica(500), 0)
	r := f.Replica()
	links := func(s Store, id string) map[string]float64 {
		out := map[string]float64{}
		for _, k := range f.Links(r.Lookup(s, id)) {
			o := f.Listing(k.Index)
			out[o.Store.String()+"/"+o.ID] = k.Confidence
		}
		return out
	}
	got := links(Chrome, "twin-chrome")
	if len(got) != 2 || got["edge/twin-edge"] < LinkThreshold || got["firefox/twin-firefox"] < LinkThreshold {
		t.Errorf("chrome twin: %v, want its edge and firefox twins", got)
	}
	if got := links(Edge, "twin-edge"); len(got) != 2 || got["chrome/twin-chrome"] == 0 || got["firefox/twin-firefox"] == 0 {
		t.Errorf("edge twin: %v", got)
	}
	for _, id := range []string{"decoy", "tie-chrome"} {
		if got := links(Chrome, id); len(got) != 0 {
			t.Errorf("%s linked to %v", id, got)
		}
	}
	if s := LinkScore(r.Lookup(Chrome, "twin-chrome"), r.Lookup(Chrome, "decoy")); s >= LinkThreshold || s < NameWeight {
		t.Errorf("decoy scores %v", s)
	}
	// The listing document carries them.
	doc := NewListingDoc(r.Lookup(Firefox, "twin-firefox"), f)
	if len(doc.AlsoIn) != 2 || doc.AlsoIn[0].Store != "chrome" || doc.AlsoIn[1].Store != "edge" {
		t.Errorf("alsoIn %+v", doc.AlsoIn)
	}
	if doc := NewListingDoc(r.Lookup(Chrome, "decoy"), f); doc.AlsoIn == nil || len(doc.AlsoIn) != 0 {
		t.Errorf("an unlinked listing's alsoIn: %#v, want []", doc.AlsoIn)
	}
}

// TestAlsoInQuery checks the alsoIn filter against brute force, with
// every strategy of List and with other filters.
func TestAlsoInQuery(t *testing.T) {
	f := Build(linkTestReplica(3000), 0)
	linked := func(l *Listing, s Store) bool {
		for _, k := range f.Links(l) {
			if f.Listing(k.Index).Store == s {
				return true
			}
		}
		return false
	}
	for _, s := range []Store{Chrome, Edge, Firefox} {
		for _, store := range []*Store{nil, Chrome.Ref(), Firefox.Ref()} {
			q := ListingQuery{AlsoIn: s.Ref(), Store: store, Sort: SortInstalls, PageSize: 1, Page: 1}
			base := q
			base.AlsoIn = nil
			byKey := map[string]*Listing{}
			for i := range f.Replica().All() {
				l := &f.Replica().All()[i]
				byKey[l.Store.String()+"/"+l.ID] = l
			}
			var want []string
			for _, id := range bruteList(f, &base) {
				if linked(byKey[id], s) {
					want = append(want, id)
				}
			}
			if len(want) == 0 && store == nil {
				t.Fatalf("alsoIn %s: nothing linked to test with", s)
			}
			for _, strategy := range []int{byCost, walkAlways, sortAlways, listAlways, alternate} {
				if got := pageAllWith(f, &q, strategy); !slices.Equal(got, want) {
					t.Errorf("alsoIn %s store %v strategy %d: %v, want %v", s, store, strategy, got, want)
				}
			}
			if total, _, _ := f.Query(&q); total != len(want) {
				t.Errorf("alsoIn %s store %v: Query total %d, want %d", s, store, total, len(want))
			}
		}
	}
}
