package listq

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// TestSortOrdersMatchBruteForce checks every sort order, store by store,
// against a comparison sort of the listings by their keys: names with
// long shared prefixes (runs that the radix sort leaves to comparison
// and runs it sorts again), and keys too wide to pack with the index.
func TestSortOrdersMatchBruteForce(t *testing.T) {
	r := replicatest.Synth(6000, nil)
	for i := range r.All() {
		l := &r.All()[i]
		switch i % 5 {
		case 0, 3, 4: // 720 names a store sharing 40 bytes: a big run, sorted again twice
			l.Name = strings.Repeat("Smart Tab Manager ", 3)[:40] + fmt.Sprint(i%7)
		case 1: // runs of equal prefixes
			l.Name = fmt.Sprintf("Photo %d editor", i%37)
		case 2:
			if i%10 == 2 {
				l.Name = []string{"", "a", "ab", "Éclair", "zz"}[i/10%5]
			} else { // small runs of equal names, ordered by index
				l.Name = fmt.Sprintf("Q%d same", i/1000)
			}
		}
		if i%97 == 0 { // a key range wider than a word less the index
			l.FirstSeen = []int64{math.MinInt64 / 2, math.MaxInt64 / 2}[i%2]
		}
	}
	r = replica.New(r.All(), r.Info())
	f := build(r)
	ls := r.All()
	for i := range numSorts {
		for s := range views.NumStores {
			var rows []bruteRow
			lo, hi := r.StoreRange(views.Store(s))
			for j := lo; j < hi; j++ {
				if ls[j].Crawled() {
					rows = append(rows, bruteRowOf(f, j, i))
				}
			}
			sortBrute(rows, false)
			present := 0
			want := make([]int32, len(rows))
			for k, rw := range rows {
				want[k] = int32(rw.idx)
				if rw.has {
					present++
				}
			}
			seg := f.orders.seg[i]
			got := f.orders.order[i][seg[s]:seg[s+1]]
			if !slices.Equal(got, want) || f.orders.present[i][s] != present {
				t.Fatalf("sort %d store %s: order or present count (%d, want %d) differs from a comparison sort",
					i, views.Store(s), f.orders.present[i][s], present)
			}
		}
	}
}

// TestSortCatalogue checks the catalogue against itself: one spec a
// sort, in Sort order; each API's names once each; the legacy sorts in
// the order of the legacy contract; the v1 order naming every v1 sort.
func TestSortCatalogue(t *testing.T) {
	legacy, v1 := map[string]bool{}, map[string]bool{}
	for i, s := range Sorts() {
		if s.Sort != Sort(i) {
			t.Fatalf("catalogue[%d] is the spec of %v", i, s.Sort)
		}
		for name, seen := range map[string]map[string]bool{s.Legacy: legacy, s.V1: v1} {
			if name != "" && seen[name] {
				t.Errorf("%q names two sorts", name)
			}
			seen[name] = true
		}
		if got, ok := LegacySort(s.Legacy); s.Legacy != "" && (!ok || got != s.Sort) {
			t.Errorf("LegacySort(%q) = %v %v", s.Legacy, got, ok)
		}
		if got, ok := V1Sort(s.V1); s.V1 != "" && (!ok || got != s.Sort) {
			t.Errorf("V1Sort(%q) = %v %v", s.V1, got, ok)
		}
		if s.Legacy == "" && s.V1 == "" && s.Sort != SortStoreRank {
			t.Errorf("%v is offered by no API", s.Sort)
		}
		if s.Growth != (s.Legacy != "" && s.def.plain == "") {
			t.Errorf("%v: growth %v, but its key reads %+v", s.Sort, s.Growth, s.def)
		}
	}
	delete(v1, "")
	if len(V1SortNames()) != len(v1) {
		t.Errorf("V1SortNames %v, the catalogue's v1 names %v", V1SortNames(), v1)
	}
	for _, n := range V1SortNames() {
		if !v1[n] {
			t.Errorf("V1SortNames has %q, which no sort is named on v1", n)
		}
	}
	contract := []string{"installs", "name", "category", "rating", "ratingcount", "updated", "firstseen", "access", "growth1d",
		"growth7d", "growth30d", "growth365d", "growthpct1d", "growthpct7d", "growthpct30d", "growthpct365d", "ratinggrowth1d",
		"ratinggrowth7d", "ratinggrowthpct1d", "ratinggrowthpct7d"}
	if !slices.Equal(SortNames, contract) {
		t.Errorf("legacy sorts %v, the contract's %v", SortNames, contract)
	}
	if s, ok := V1Sort("size"); ok {
		t.Errorf("an unknown v1 name gave %v", s)
	}
	if s, ok := LegacySort("nope"); ok || s != SortInstalls {
		t.Errorf("an unknown legacy name gave %v %v, want installs and false", s, ok)
	}
}
