package replica

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/viewstest"
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
		base, changed := drawChange(rng, key, 200, 60, 2, 3)
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
			// Into a spare array, with room for n or more, every other
			// round (stale listings in it, as a reused array would hold).
			var spare []views.Listing
			if round%2 == 1 {
				spare = make([]views.Listing, n+rng.IntN(3))
				for i := range spare {
					spare[i] = key(1000 + i)
				}
				spare = spare[:0]
			}
			got, a, ok := applyListings(base, slices.Clone(removed), changed, n, spare)
			if ok && spare != nil && len(got) > 0 && &got[:1][0] != &spare[:1][0] {
				t.Fatalf("round %d: the listings were not written into the spare array", round)
			}
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
			checkApplied(t, base, got, changed, a)
		}
	}
}

// drawChange draws a base of listings and the changes of a delta to it,
// both in key order: of up to most keys of [0, space) (key makes a
// listing of one), half the base's, and of the others 1 in newOneIn
// added and of the base's 1 in replacedOneIn replaced.
func drawChange(rng *rand.Rand, key func(int) views.Listing, space, most, newOneIn, replacedOneIn int) (base, changed []views.Listing) {
	keys := rng.Perm(space)[:rng.IntN(most)]
	for _, k := range keys[:len(keys)/2] {
		base = append(base, key(k))
	}
	for _, k := range keys[len(keys)/2:] { // new keys
		if rng.IntN(newOneIn) == 0 {
			changed = append(changed, key(k))
		}
	}
	for _, k := range keys[:len(keys)/2] { // replaced
		if rng.IntN(replacedOneIn) == 0 {
			changed = append(changed, key(k))
		}
	}
	slices.SortFunc(base, func(a, b views.Listing) int { return compareKey(&a, &b) })
	slices.SortFunc(changed, func(a, b views.Listing) int { return compareKey(&a, &b) })
	return base, changed
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

// checkApplied checks what applyListings says it did: the listings it
// added are changed's, in order, and every base listing it did not drop
// is in out unchanged, in order, at the indexes it did not add.
func checkApplied(t *testing.T, base, out, changed []views.Listing, a Applied) {
	t.Helper()
	if len(a.Added) != len(changed) || len(base)-len(a.Dropped) != len(out)-len(a.Added) {
		t.Fatalf("%d added and %d dropped of %d base listings for %d changed and %d after", len(a.Added), len(a.Dropped), len(base), len(changed), len(out))
	}
	for _, idx := range [][]int32{a.Added, a.Dropped} {
		for k := 1; k < len(idx); k++ {
			if idx[k] <= idx[k-1] {
				t.Fatalf("indexes not ascending: %v", idx)
			}
		}
	}
	for k, j := range a.Added {
		if out[j].ID != changed[k].ID || out[j].Store != changed[k].Store {
			t.Fatalf("added[%d] = %d is %s, want %s", k, j, out[j].ID, changed[k].ID)
		}
	}
	j, added, dropped := 0, a.Added, a.Dropped
	for i := range base {
		if len(dropped) > 0 && int(dropped[0]) == i {
			dropped = dropped[1:]
			continue
		}
		for len(added) > 0 && int(added[0]) == j {
			added, j = added[1:], j+1
		}
		if !sameMemory(&base[i], &out[j]) {
			t.Fatalf("base listing %d (%s) kept, but out[%d] is %s", i, base[i].ID, j, out[j].ID)
		}
		j++
	}
}

// TestDiffListingsInPartsAsWhole checks diffListings, which compares a
// part of the listings a core, against one comparison of them all
// (diffRange), with listings changed, removed and added at and around
// the parts' bounds.
func TestDiffListingsInPartsAsWhole(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	defer func(n int) { diffPartMin = n }(diffPartMin)
	diffPartMin = 1000
	prev := New(viewstest.Synth(8_000, nil), Info{}).listings
	rng := rand.New(rand.NewPCG(7, 54))
	for round := range 4 {
		next := slices.Clone(prev)
		for _, at := range []int{0, len(next) / 4, len(next) / 2, 3 * len(next) / 4, len(next) - 1} {
			for d := -2; d <= 2; d++ {
				if k := at + d; k >= 0 && k < len(next) && rng.IntN(2) == 0 {
					next[k].SetUsage(int64(rng.IntN(1000)), true)
				}
			}
		}
		for range 60 {
			next[rng.IntN(len(next))].Name = "changed"
		}
		for range rng.IntN(50) {
			k := rng.IntN(len(next))
			next = slices.Delete(next, k, k+1)
		}
		if round%2 == 0 { // the first and last listings gone, or new ones before and after
			next = next[1 : len(next)-1]
		} else {
			first, last := next[0], next[len(next)-1]
			first.ID, last.ID = "", last.ID+"~"
			next = append([]views.Listing{first}, append(next, last)...)
		}
		for k := range rng.IntN(50) {
			l := next[rng.IntN(len(next))]
			l.ID += fmt.Sprintf("-new-%d", k)
			next = append(next, l)
		}
		next = New(next, Info{}).listings
		wantC, wantR := diffRange(prev, next, 0, len(prev), 0, len(next))
		gotC, gotR := diffListings(prev, next)
		if len(wantC) < 60 || !slices.Equal(gotC, wantC) || !slices.Equal(gotR, wantR) {
			t.Fatalf("round %d: %d changed and %d removed in parts, %d and %d whole", round, len(gotC), len(gotR), len(wantC), len(wantR))
		}
	}
}

// TestComposeIsTheChainsApplied checks compose, over drawn chains of two
// deltas (listings removed, replaced, added, and a listing added by the
// first and replaced or removed by the second), against what the chain
// did, told by each listing's origin (the base's, or one delta's).
func TestComposeIsTheChainsApplied(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 54))
	listing := func(k int, from string) views.Listing {
		return views.Listing{Store: views.Store(k % 3), ID: fmt.Sprintf("id-%05d", k), Name: from + fmt.Sprint(rng.Int())}
	}
	byKey := func(ls []views.Listing) []views.Listing {
		slices.SortFunc(ls, func(a, b views.Listing) int { return compareKey(&a, &b) })
		return ls
	}
	// step draws a delta on base: removed indexes, and changed listings
	// (in key order) of keys in base or new, named from.
	step := func(base []views.Listing, keys []int, from string) ([]int, []views.Listing) {
		var removed []int
		var changed []views.Listing
		taken := map[string]bool{}
		for i := range base {
			switch rng.IntN(5) {
			case 0:
				removed = append(removed, i)
				taken[base[i].ID] = true
			case 1:
				k, _ := strconv.Atoi(strings.TrimPrefix(base[i].ID, "id-"))
				changed = append(changed, listing(k, from))
				taken[base[i].ID] = true
			}
		}
		for _, k := range keys {
			if l := listing(k, from); !taken[l.ID] && rng.IntN(3) == 0 {
				if _, found := slices.BinarySearchFunc(base, l, func(a, b views.Listing) int { return compareKey(&a, &b) }); !found {
					changed = append(changed, l)
					taken[l.ID] = true
				}
			}
		}
		return removed, byKey(changed)
	}
	for round := range 1000 {
		keys := rng.Perm(300)[:rng.IntN(120)]
		var b0 []views.Listing
		for _, k := range keys[:len(keys)/2] {
			b0 = append(b0, listing(k, "b"))
		}
		b0 = byKey(b0)
		removed1, changed1 := step(b0, keys, "1")
		r1, a1, ok := applyListings(b0, removed1, changed1, len(b0)+len(changed1), nil)
		if !ok {
			t.Fatal("the first delta does not apply")
		}
		removed2, changed2 := step(r1, keys, "2")
		r2, a2, ok := applyListings(r1, removed2, changed2, len(r1)+len(changed2), nil)
		if !ok {
			t.Fatal("the second delta does not apply")
		}
		var want Applied
		var survivors []views.Listing
		at := map[string]int{}
		for j := range r2 {
			at[r2[j].ID] = j
			if !strings.HasPrefix(r2[j].Name, "b") {
				want.Added = append(want.Added, int32(j))
				survivors = append(survivors, r2[j])
			}
		}
		for i := range b0 {
			if j, ok := at[b0[i].ID]; !ok || !strings.HasPrefix(r2[j].Name, "b") {
				want.Dropped = append(want.Dropped, int32(i))
			}
		}
		got := compose(a1, a2)
		if !slices.Equal(got.Added, want.Added) || !slices.Equal(got.Dropped, want.Dropped) {
			t.Fatalf("round %d: composed %+v, the chain did %+v", round, got, want)
		}
		checkApplied(t, b0, r2, survivors, got)
	}
}
