package feed

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
)

// TestChangesPageThroughEveryListing builds figures over listings with
// random metadata and reading times (many equal) and pages through the
// feed: every listing once, in (changedAt, store, id) order, from any
// place, including one of a listing that is not in the replica.
func TestChangesPageThroughEveryListing(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var ls []views.Listing
	for i := range 1000 {
		l := views.Listing{Store: views.Store(rng.IntN(int(views.NumStores))), ID: fmt.Sprintf("id%04d", rng.IntN(100000)), MetaAt: 1000 + int64(rng.IntN(50))}
		if i%3 != 0 {
			l.ReadAt = 1000 + int64(rng.IntN(80)) // some read after their metadata, some before
		}
		ls = append(ls, l)
	}
	r := replica.New(ls, replica.Info{})
	f := Build(r)
	var want []Pos
	for _, l := range r.All() {
		want = append(want, Pos{l.ChangedAt(), l.Store, l.ID})
	}
	slices.SortFunc(want, func(a, b Pos) int { return a.compare(b) })

	for _, limit := range []int{1, 7, 100, 5000} {
		var got []Pos
		pos := Pos{}
		for pages := 0; ; pages++ {
			if pages > 2000 {
				t.Fatal("the feed does not end")
			}
			page, next := f.Page(pos, limit)
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
				got = append(got, Pos{l.ChangedAt(), l.Store, l.ID})
			}
			if c := f.Count(pos); c != len(want)-len(got)+len(page) {
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
	page, _ := f.Page(mid, 1)
	if len(page) != 1 || (Pos{page[0].ChangedAt(), page[0].Store, page[0].ID}) != want[501] {
		t.Fatalf("after %v: %v, want %v", mid, page, want[501])
	}
}
