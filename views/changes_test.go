package views

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestChangesPageThroughEveryListing builds figures over listings with
// random metadata and reading times (many equal) and pages through the
// feed: every listing once, in (changedAt, store, id) order, from any
// place, including one of a listing that is not in the replica.
func TestChangesPageThroughEveryListing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ls []Listing
	for i := range 1000 {
		l := Listing{Store: Store(rng.IntN(int(NumStores))), ID: fmt.Sprintf("id%04d", rng.IntN(100000)), MetaAt: 1000 + int64(rng.IntN(50))}
		if i%3 != 0 {
			l.ReadAt = 1000 + int64(rng.IntN(80)) // some read after their metadata, some before
		}
		ls = append(ls, l)
	}
	f := Build(NewReplica(ls, ReplicaInfo{}), 0)
	var want []ChangePos
	for _, l := range f.Replica().All() {
		want = append(want, ChangePos{l.ChangedAt(), l.Store, l.ID})
	}
	slices.SortFunc(want, func(a, b ChangePos) int { return a.compare(b) })

	for _, limit := range []int{1, 7, 100, 5000} {
		var got []ChangePos
		pos := ChangePos{}
		for pages := 0; ; pages++ {
			if pages > 2000 {
				t.Fatal("the feed does not end")
			}
			page, next := f.Changes(pos, limit)
			if len(page) == 0 {
				if next != pos {
					t.Fatalf("an empty page moved the place from %v to %v", pos, next)
				}
				break
			}
			if len(page) > limit || next.compare(pos) <= 0 {
				t.Fatalf("page of %d (limit %d), next %v after %v: the cursor must advance", len(page), limit, next, pos)
			}
			for _, l := range page {
				got = append(got, ChangePos{l.ChangedAt(), l.Store, l.ID})
			}
			if c := f.ChangeCount(pos); c != len(want)-len(got)+len(page) {
				t.Fatalf("ChangeCount %d, want %d", c, len(want)-len(got)+len(page))
			}
			pos = next
		}
		if !slices.Equal(got, want) {
			t.Fatalf("limit %d: %d changes, want %d in order", limit, len(got), len(want))
		}
	}
	// From a place between listings: the next one after it.
	mid := want[500]
	mid.ID += "~" // not a listing
	page, _ := f.Changes(mid, 1)
	if len(page) != 1 || (ChangePos{page[0].ChangedAt(), page[0].Store, page[0].ID}) != want[501] {
		t.Fatalf("after %v: %v, want %v", mid, page, want[501])
	}
}
