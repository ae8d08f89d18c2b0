package v1

import (
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
)

// FuzzParseListingRefs feeds /compare's listings parameter anything: it
// never panics, refuses with a 400 problem, or gives 2 to 10 distinct
// listings of known stores with ids that are parts of the input.
func FuzzParseListingRefs(f *testing.F) {
	for _, s := range []string{"chrome:a,firefox:b", "chrome:a,chrome:a", "x", "", ",", "chrome:,edge:b", "apple:1:2,googleplay:com.x", strings.Repeat("edge:a,", 11)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		refs, err := parseListingRefs(raw)
		if err != nil {
			if p, ok := err.(*problem.Problem); !ok || p.Status != 400 {
				t.Fatalf("%q: %v, want a 400 problem", raw, err)
			}
			return
		}
		if len(refs) < 2 || len(refs) > 10 {
			t.Fatalf("%q: %d listings", raw, len(refs))
		}
		seen := map[listingRef]bool{}
		for _, r := range refs {
			if r.store >= views.NumStores || r.id == "" || !strings.Contains(raw, r.id) || seen[r] {
				t.Fatalf("%q: %+v", raw, r)
			}
			seen[r] = true
		}
	})
}

// FuzzSincePos feeds the change feed's since anything: it never panics,
// refuses with a 400 problem, or gives a place whose store is at most one
// past the last (the place after a whole second).
func FuzzSincePos(f *testing.F) {
	for _, s := range []string{"", "2026-03-01", "2026-03-01T10:00:00Z", "eyJ2IjoxLCJ0IjoxLCJzIjoxLCJpIjoiYSJ9", "eyJ2IjoxLCJzIjo5fQ", "%%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		pos, err := sincePos(raw)
		if err != nil {
			if p, ok := err.(*problem.Problem); !ok || p.Status != 400 {
				t.Fatalf("%q: %v, want a 400 problem", raw, err)
			}
			return
		}
		if pos.Store > views.NumStores || len(pos.ID) > 512 {
			t.Fatalf("%q: %+v", raw, pos)
		}
	})
}
