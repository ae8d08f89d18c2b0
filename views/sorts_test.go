package views

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestSortOrdersMatchBruteForce checks every sort order, store by store,
// against a comparison sort of the listings by their keys: names with
// long shared prefixes (runs that the radix sort leaves to comparison
// and runs it sorts again), and keys too wide to pack with the index.
func TestSortOrdersMatchBruteForce(t *testing.T) {
	r := synthReplica(6000)
	for i := range r.listings {
		l := &r.listings[i]
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
	r = NewReplica(r.listings, r.info)
	f := Build(r, 0)
	ls := r.listings
	for i := range numSorts {
		for s := range NumStores {
			var rows []bruteRow
			for j := r.storeStart[s]; j < r.storeStart[s+1]; j++ {
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
					i, Store(s), f.orders.present[i][s], present)
			}
		}
	}
}
