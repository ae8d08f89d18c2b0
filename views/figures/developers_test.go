package figures

import (
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/viewstest"
)

// TestDeveloperMatchesAScan: a developer's listings are every listing of
// the store with exactly that developer, in id order, for every
// developer of a synthetic replica; an unknown or empty name has none.
func TestDeveloperMatchesAScan(t *testing.T) {
	// Synthetic listings with one developer each, but every seventh
	// given one of five developers (of several listings each, in stores).
	b := replica.NewBuilder(3000)
	for i, l := range viewstest.Synth(3000, nil) {
		if i%7 == 0 {
			l.Developer = []string{"Acme", "Zed Labs", "acme", "Ünïcode Co", "A"}[i%5]
		}
		b.Add(&l)
	}
	r := b.Build(replicatest.Info())
	f := Build(r, 0)
	want := map[views.Store]map[string][]string{}
	for i := range r.Len() {
		l := r.At(int32(i))
		if want[l.Store] == nil {
			want[l.Store] = map[string][]string{}
		}
		want[l.Store][l.Developer] = append(want[l.Store][l.Developer], l.ID)
	}
	several := 0
	for s, devs := range want {
		for dev, ids := range devs {
			if dev == "" {
				continue
			}
			got := f.Developer(s, dev)
			if len(got) != len(ids) {
				t.Fatalf("%s %q: %d listings, a scan finds %d", s, dev, len(got), len(ids))
			}
			for i, l := range got {
				if l.ID != ids[i] || l.Developer != dev || l.Store != s {
					t.Fatalf("%s %q: listing %d is %s of %q, want %s", s, dev, i, l.ID, l.Developer, ids[i])
				}
			}
			if len(ids) > 1 {
				several++
			}
		}
	}
	if several == 0 {
		t.Error("no developer has several listings: the test says nothing of the search")
	}
	if f.Developer(views.Chrome, "no such developer") != nil || f.Developer(views.Chrome, "") != nil {
		t.Error("an unknown or empty developer has listings")
	}
}
