package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/views"
)

// searchPage is what every search answer shares: the partial flag and the
// next page.
type searchPage struct {
	Partial    *bool
	NextCursor *string
}

// TestSearchBudgets checks that the three searches stop at their budgets:
// q on /listings (in memory), q on a listing's reviews and review search
// (in ClickHouse, by the row bound). An answer cut short says partial,
// offers no next page, is not cacheable and carries no ETag; the same
// requests on a server with the default budgets are whole and cacheable.
func TestSearchBudgets(t *testing.T) {
	cfg := seeded(t)
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	tight := start(t, cfg, func(c *edge.Config) { c.TextBudget, c.SearchMaxRows = time.Nanosecond, 1 })
	roomy := start(t, cfg)
	for _, h := range []*harness{tight, roomy} {
		if err := h.Jobs.RunNow("views"); err != nil {
			t.Fatal(err)
		}
	}
	var target views.Listing
	for _, l := range tight.State.Load().Replica.OfStore(views.Firefox) {
		if l.Live() {
			target = l
			break
		}
	}
	at := time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC)
	var rows []analytics.ReviewRow
	for i := range 30 {
		rows = append(rows, analytics.ReviewRow{Store: views.Firefox, ListingID: target.ID, ReviewID: fmt.Sprintf("budget-%02d", i),
			PostedAt: at.Add(time.Duration(i) * time.Minute), Stars: 1, Author: "A", Lang: "en", Text: "it keeps freezing", CrawledAt: at})
	}
	if err := analytics.WriteReviews(context.Background(), conn, rows); err != nil {
		t.Fatal(err)
	}
	name := []rune(target.Name)
	searches := []string{
		"/api/v1/listings?limit=1&q=" + url.QueryEscape(string(name[:min(len(name), 4)])),
		"/api/v1/listings/firefox/" + target.ID + "/reviews?q=freezing",
		"/api/v1/reviews/search?q=freezing",
	}
	for _, path := range searches {
		for _, h := range []*harness{tight, roomy} {
			a := get(t, "GET", h.Base+path)
			if a.status != 200 {
				t.Fatalf("%s: %d %s", path, a.status, a.body)
			}
			var p searchPage
			if err := json.Unmarshal(a.body, &p); err != nil {
				t.Fatal(err)
			}
			if p.Partial == nil {
				t.Fatalf("%s: no partial field in %s", path, a.body)
			}
			cut := h == tight
			if *p.Partial != cut {
				t.Errorf("%s (budget cut %v): partial %v in %s", path, cut, *p.Partial, a.body)
			}
			wantCC := "private, max-age=60"
			if cut {
				wantCC = "no-store"
			}
			if cc := a.header.Get("Cache-Control"); cc != wantCC {
				t.Errorf("%s (budget cut %v): Cache-Control %q, want %q", path, cut, cc, wantCC)
			}
			if etag := a.header.Get("ETag"); (etag == "") != cut {
				t.Errorf("%s (budget cut %v): ETag %q", path, cut, etag)
			}
			if cut && p.NextCursor != nil {
				t.Errorf("%s: a partial answer offers a next page", path)
			}
		}
	}
	// The whole answers found what they were asked: the listing by its
	// name, its 30 freezing reviews (20 on the first page), and the
	// listing among the review search's hits.
	list := getOK[struct{ Listings []struct{ ID string } }](t, roomy.Base+searches[0])
	reviews := getOK[struct{ Reviews []struct{ ID string } }](t, roomy.Base+searches[1])
	hits := getOK[struct{ Hits []struct{ ID string } }](t, roomy.Base+searches[2])
	if len(list.Listings) != 1 || len(reviews.Reviews) != 20 || len(hits.Hits) == 0 {
		t.Errorf("whole answers: %d listings, %d reviews, %d hits", len(list.Listings), len(reviews.Reviews), len(hits.Hits))
	}
}
