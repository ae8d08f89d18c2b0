package edge_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

// TestAnswerAliases checks the answers cached under the request as it
// came (the raw query): the same query asked again, and spelled
// otherwise, gets the same answer, and after a rebuild publishes new
// figures the same raw query gets the new answer, not the one its alias
// led to before.
func TestAnswerAliases(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	type page struct {
		Rows     []struct{ ID string }
		Listings []struct{ ID string }
	}
	first := func(path string) (id, etag string) {
		t.Helper()
		a := get(t, "GET", h.Base+path)
		var p page
		if err := json.Unmarshal(a.body, &p); a.status != 200 || err != nil {
			t.Fatalf("%s: %d %v", path, a.status, err)
		}
		rows := p.Rows
		if len(rows) == 0 {
			rows = p.Listings
		}
		if len(rows) == 0 {
			t.Fatalf("%s: no rows", path)
		}
		return rows[0].ID, a.header.Get("ETag")
	}
	paths := [][]string{ // each group asks for one answer
		{"/api/extensions?platform=1&sort=installs", "/api/extensions?sort=installs&platform=1", "/api/extensions?platform=1&dir=desc"},
		{"/api/v1/listings?store=edge&limit=5", "/api/v1/listings?limit=5&store=edge", "/api/v1/listings?store=edge&limit=5&order=desc"},
	}
	for _, group := range paths {
		_, want := first(group[0])
		for range 3 { // the alias is set on the first ask and found after
			for _, p := range group {
				if _, etag := first(p); etag != want {
					t.Fatalf("%s: ETag %s, want %s as for %s", p, etag, want, group[0])
				}
			}
			time.Sleep(20 * time.Millisecond) // the cache admits new keys asynchronously
		}
	}

	// A listing larger than any other, then a rebuild: each raw query asked
	// before now leads with it.
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	huge := uint64(1 << 40)
	for _, store := range []views.Store{views.Firefox, views.Edge} {
		cfg.Add(t, []analytics.ListingRow{{Store: store, ID: "giant", Name: "Giant", CrawledAt: at, FirstSeen: at}},
			[]analytics.SnapshotRow{{Store: store, ID: "giant", CrawledAt: at, Usage: &huge}})
	}
	gen := h.State.Load().Replica.Info().Generation
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if h.State.Load().Replica.Info().Generation == gen {
		t.Fatal("the rebuild published no new generation")
	}
	for _, group := range paths {
		for _, p := range group {
			if id, _ := first(p); id != "giant" {
				t.Errorf("%s after the rebuild: first row %s, want giant", p, id)
			}
		}
	}
}
