package listq

import (
	"slices"
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// TestAlsoInQuery checks the alsoIn filter against brute force, with
// every strategy of List and with other filters.
func TestAlsoInQuery(t *testing.T) {
	f := build(replicatest.Twins(3000))
	linked := func(l *views.Listing, s views.Store) bool {
		for _, k := range f.cols.links.Of(f.replica.Index(l)) {
			if f.replica.At(k.Index).Store == s {
				return true
			}
		}
		return false
	}
	for _, s := range []views.Store{views.Chrome, views.Edge, views.Firefox} {
		for _, store := range []*views.Store{nil, views.Chrome.Ref(), views.Firefox.Ref()} {
			q := Query{AlsoIn: s.Ref(), Store: store, Sort: SortInstalls, PageSize: 1, Page: 1}
			base := q
			base.AlsoIn = nil
			byKey := map[string]*views.Listing{}
			for i := range f.replica.All() {
				l := &f.replica.All()[i]
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
			if total, _, _ := f.Page(&q); total != len(want) {
				t.Errorf("alsoIn %s store %v: Query total %d, want %d", s, store, total, len(want))
			}
		}
	}
}
