package replica

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
)

// TestGroupsFromAreGroupsOf checks the digest's groups of a replica made
// from another by a delta (groupsFrom: the groups before, those the
// change touched hashed again) against its groups hashed whole
// (groupsOf), over drawn bases and changes: listings added, replaced and
// removed anywhere, at either end, a group's last listing among them,
// every listing removed, and none. It asks that groups were taken from
// the base, not only hashed again.
func TestGroupsFromAreGroupsOf(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	key := func(k int) views.Listing {
		return views.Listing{Store: views.Store(k % 3), ID: fmt.Sprintf("id-%05d", k), Name: fmt.Sprint(rng.IntN(4))}
	}
	reused := 0
	for round := range 3000 {
		base, changed := drawChange(rng, key, 2000, 800, 8, 10)
		var removed []int
		every := 1 + rng.IntN(40) // round 0 mod 7: every listing removed
		for i := range base {
			if round%7 == 0 || rng.IntN(every) == 0 {
				removed = append(removed, i)
			}
		}
		if round%5 == 0 {
			changed, removed = nil, nil // nothing changed
		}
		out, a, ok := applyListings(base, removed, changed, len(base)+len(changed), nil)
		if !ok {
			t.Fatalf("round %d: not applied", round)
		}
		bg := groupsOf(base)
		got, ok := groupsFrom(out, &bg, a)
		if !ok {
			t.Fatalf("round %d: groups not made from the base's", round)
		}
		want := groupsOf(out)
		if !slices.Equal(got.ends, want.ends) || got.open != want.open || !slices.Equal(got.hashes, want.hashes) {
			t.Fatalf("round %d: %d listings from %d: groups ends %v open %v, want %v open %v (hashes equal %v)",
				round, len(out), len(base), got.ends, got.open, want.ends, want.open, slices.Equal(got.hashes, want.hashes))
		}
		for g := range got.hashes {
			if slices.Contains(bg.hashes, got.hashes[g]) {
				reused++
			}
		}
	}
	if reused < 10000 {
		t.Errorf("%d groups taken from the base's in all: the test draws too few unchanged ones", reused)
	}
}

// TestGroupsFromRefusesWhatDoesNotFit gives groupsFrom an Applied of
// other listings: it must say so rather than make groups.
func TestGroupsFromRefusesWhatDoesNotFit(t *testing.T) {
	var base []views.Listing
	for k := range 100 {
		base = append(base, views.Listing{ID: fmt.Sprintf("id-%03d", k)})
	}
	bg := groupsOf(base)
	for _, a := range []Applied{
		{Added: []int32{0}},                                // one listing more than the base's
		{Dropped: []int32{3}},                              // one fewer
		{Added: []int32{100}},                              // an index past the listings
		{Dropped: []int32{100, 101}, Added: []int32{0, 1}}, // drops past the base
	} {
		if _, ok := groupsFrom(base, &bg, a); ok {
			t.Errorf("%+v: groups made from a base it does not fit", a)
		}
	}
}

// TestMergedDigestIsTheWholeDigest checks the digest of a refresh's
// merge (Merge, hashed from the groups of the replica before) against the
// same listings' digest hashed whole.
func TestMergedDigestIsTheWholeDigest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	b := NewBuilder(0)
	for k := range 5000 {
		b.Add(&views.Listing{Store: views.Store(k % 5), ID: fmt.Sprintf("x%06d", k), Name: "a"})
	}
	day := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	old := b.Build(NewInfo(day, day))
	DigestOf(old, 1) // its groups, as a leader's previous state has them
	for step := range 20 {
		ch := NewBuilder(0)
		for range rng.IntN(300) {
			k := rng.IntN(7000)
			ch.Add(&views.Listing{Store: views.Store(k % 5), ID: fmt.Sprintf("x%06d", k), Name: fmt.Sprint(step)})
		}
		next := Merge(old, ch, old.Info())
		if a, ok := next.AppliedTo(old); !ok || len(a.Added) == 0 && ch.Len() > 0 {
			t.Fatalf("step %d: the merge says nothing of how it was made (%v)", step, ok)
		}
		whole := New(slices.Clone(next.All()), next.Info())
		if got, want := DigestOf(next, 1), DigestOf(whole, 1); got != want {
			t.Fatalf("step %d: merged digest %x, hashed whole %x", step, got[:8], want[:8])
		}
		old = next
	}
}
