package replica

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edge-stats/edge/views"
)

// TestApplyListingsAsAMerge checks applyListings (a binary search a
// changed listing, runs copied whole) against a merge of the two lists
// listing by listing (mergeListings), over drawn bases, removals and
// changes: added, replaced, at either end, next to removed ones, and
// removed and changed at once.
func TestApplyListingsAsAMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	key := func(k int) views.Listing {
		return views.Listing{Store: views.Store(k % 3), ID: fmt.Sprintf("id-%05d", k), Name: fmt.Sprint(rng.Int())}
	}
	for round := range 2000 {
		keys := rng.Perm(200)[:rng.IntN(60)]
		var base []views.Listing
		for _, k := range keys[:len(keys)/2] {
			base = append(base, key(k))
		}
		var changed []views.Listing
		for _, k := range keys[len(keys)/2:] { // new keys
			if rng.IntN(2) == 0 {
				changed = append(changed, key(k))
			}
		}
		for _, k := range keys[:len(keys)/2] { // replaced
			if rng.IntN(3) == 0 {
				changed = append(changed, key(k))
			}
		}
		slices.SortFunc(base, func(a, b views.Listing) int { return compareKey(&a, &b) })
		slices.SortFunc(changed, func(a, b views.Listing) int { return compareKey(&a, &b) })
		var removed []int
		for i := range base {
			if rng.IntN(4) == 0 {
				removed = append(removed, i)
			}
		}
		want := mergeListings(base, slices.Clone(removed), changed, len(base)+len(changed))
		for _, n := range []int{len(want), len(want) - 1} {
			if n < 0 {
				continue
			}
			got, ok := applyListings(base, slices.Clone(removed), changed, n)
			if n < len(want) {
				if ok && len(got) == n {
					t.Fatalf("round %d: %d listings fit a bound of %d", round, len(want), n)
				}
				continue
			}
			if !ok || len(got) != len(want) {
				t.Fatalf("round %d: %d listings (ok %v), want %d", round, len(got), ok, len(want))
			}
			for i := range got {
				if got[i].Store != want[i].Store || got[i].ID != want[i].ID || got[i].Name != want[i].Name {
					t.Fatalf("round %d: listing %d is %d/%s, want %d/%s", round, i, got[i].Store, got[i].ID, want[i].Store, want[i].ID)
				}
			}
		}
	}
}

// mergeListings is applyListings listing by listing: the merge it was.
func mergeListings(base []views.Listing, removed []int, changed []views.Listing, n int) []views.Listing {
	out := make([]views.Listing, 0, n)
	i, j := 0, 0
	for i < len(base) || j < len(changed) {
		if len(removed) > 0 && removed[0] == i {
			removed = removed[1:]
			i++
			continue
		}
		c := 1
		switch {
		case i == len(base):
			c = 1
		case j == len(changed):
			c = -1
		default:
			c = compareKey(&base[i], &changed[j])
		}
		switch {
		case c < 0:
			out = append(out, base[i])
			i++
		case c > 0:
			out = append(out, changed[j])
			j++
		default:
			out = append(out, changed[j])
			i++
			j++
		}
		if len(out) > n {
			return out // the caller refuses it
		}
	}
	return out
}
