package v1

import (
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/eventfilter"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
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

// FuzzParseInstant checks that /growth's instant parameter either parses
// to an instant of the years 2000 to 9999, whole seconds in UTC, or is a
// 400 problem, and leaves dates to the date parser.
func FuzzParseInstant(f *testing.F) {
	for _, s := range []string{"2026-03-01", "2026-03-01T10:00:00Z", "2026-03-01T10:00:00+05:30", "2026-03-01T10:00:00.999Z", "2026-03-01T25:00:00Z", "1999-12-31T23:59:59Z", "2026-03-01T10:00:00", "", "%%%"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		at, ok, err := parseInstant("from", raw)
		switch {
		case err != nil:
			if p, isProblem := err.(*problem.Problem); !isProblem || p.Status != 400 || ok {
				t.Fatalf("%q: %v, want a 400 problem", raw, err)
			}
		case !ok:
			if len(raw) > len(time.DateOnly) {
				t.Fatalf("%q: neither parsed nor refused", raw)
			}
		case at.Location() != time.UTC || at.Nanosecond() != 0 || at.Year() < 2000 || at.Year() > 9999:
			t.Fatalf("%q: %v", raw, at)
		}
	})
}

// FuzzEventQuery checks the event feed's parameters: store, kind and
// permission parse to a filter of valid stores and kinds, at most 16 of
// each, or a 400 problem; since parses to a place or a 400; and every
// event's cursor reads back as the place it was made from.
func FuzzEventQuery(f *testing.F) {
	f.Add("chrome,edge", "version,hostAccess", "", "2026-03-01", int64(1772323200), uint8(1), "abc", uint8(3))
	f.Add("", "", "tabs", "eyJ2IjoxfQ", int64(-5), uint8(9), "", uint8(0))
	f.Add(",,", "Version", "x", "%%%", int64(0), uint8(0), "\x00", uint8(12))
	f.Fuzz(func(t *testing.T, stores, kinds, permission, since string, at int64, store uint8, id string, kind uint8) {
		is400 := func(err error) bool {
			p, ok := err.(*problem.Problem)
			return ok && p.Status == 400
		}
		filter, err := eventfilter.Parse(stores, kinds, permission)
		if err != nil && !is400(err) {
			t.Fatalf("filter %q %q %q: %v, want a 400 problem", stores, kinds, permission, err)
		}
		if err == nil {
			if len(filter.Stores) > eventfilter.MaxNames || len(filter.Kinds) > eventfilter.MaxNames || len(filter.Permission) > 200 {
				t.Fatalf("filter %+v", filter)
			}
			for _, s := range filter.Stores {
				if !s.Valid() {
					t.Fatalf("store %d", s)
				}
			}
			for _, k := range filter.Kinds {
				if k.String() == "" {
					t.Fatalf("kind %d", k)
				}
			}
		}
		if pos, err := sinceEvent(since); err != nil && !is400(err) || err == nil && (pos.Store > views.NumStores || len(pos.ID) > 512) {
			t.Fatalf("since %q: %+v, %v", since, pos, err)
		}
		if store < views.NumStores && changes.Kind(kind).String() != "" && len(id) <= 512 {
			p := changes.Pos{At: at, Store: views.Store(store), ID: id, Kind: changes.Kind(kind)}
			if back, ok := document.ParseEventCursor(document.EventCursor(p)); !ok || back != p {
				t.Fatalf("cursor of %+v read back as %+v, %v", p, back, ok)
			}
		}
	})
}
