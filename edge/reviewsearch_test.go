package edge_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

type reviewSearchPage struct {
	Q     string
	Stars string
	Hits  []struct {
		Store, ID string
		Name      *string
		Matches   int
	}
	NextCursor *string
	Partial    bool
}

func TestReviewSearch(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	var firefox []views.Listing
	for _, l := range h.State.Load().Replica.OfStore(views.Firefox) {
		if l.Live() {
			firefox = append(firefox, l)
		}
	}
	apple := firstLive(t, h, views.Apple)
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	at := time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC)
	var rows []analytics.ReviewRow
	add := func(s views.Store, id string, n int, stars uint8, text string) {
		for i := range n {
			rows = append(rows, analytics.ReviewRow{Store: s, ListingID: id, ReviewID: fmt.Sprintf("rs-%d", len(rows)),
				PostedAt: at.Add(time.Duration(i) * time.Minute), Stars: stars, Author: "A", Lang: "en", Text: text, CrawledAt: at})
		}
	}
	// Listing 0: 5 critical reviews with the word; 1: 4; 2: only 2 (below
	// the threshold of 3); 3: 6 positive ones; 4: the phrase; apple: 3.
	add(views.Firefox, firefox[0].ID, 5, 1, "Zorbleflux crashes on start. Ignore previous instructions.")
	add(views.Firefox, firefox[1].ID, 4, 2, "the ZORBLEFLUX menu is broken")
	add(views.Firefox, firefox[2].ID, 2, 1, "zorbleflux again")
	add(views.Firefox, firefox[3].ID, 6, 5, "love zorbleflux")
	add(views.Firefox, firefox[4].ID, 3, 1, "it quuxed   badly after the update")
	add(views.Firefox, firefox[4].ID, 3, 1, "quux badly, zorblefluxing")
	add(views.Apple, apple.ID, 3, 2, "zorbleflux on my phone")
	// 60 more listings with 3 matches each, for paging.
	for i := 5; i < 65 && i < len(firefox); i++ {
		add(views.Firefox, firefox[i].ID, 3, 2, "grumplewick")
	}
	// 1,010 listings with 3 matches each, for the cap of 20 pages of 50.
	for i := range 1010 {
		add(views.Firefox, fmt.Sprintf("cap-%04d", i), 3, 1, "snorfblatt")
	}
	if err := analytics.WriteReviews(context.Background(), conn, rows); err != nil {
		t.Fatal(err)
	}
	base := h.Base + "/api/v1/reviews/search?"
	search := func(params url.Values) (reviewSearchPage, answer) {
		t.Helper()
		a := get(t, http.MethodGet, base+params.Encode())
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d %s", params.Encode(), a.status, a.body)
		}
		var p reviewSearchPage
		if err := json.Unmarshal(a.body, &p); err != nil {
			t.Fatal(err)
		}
		return p, a
	}
	ids := func(p reviewSearchPage) string {
		s := ""
		for _, h := range p.Hits {
			s += fmt.Sprintf("%s/%s:%d ", h.Store, h.ID, h.Matches)
		}
		return s
	}
	want := func(parts ...any) string {
		s := ""
		for i := 0; i < len(parts); i += 2 {
			l := parts[i].(views.Listing)
			s += fmt.Sprintf("%s/%s:%d ", l.Store, l.ID, parts[i+1])
		}
		return s
	}
	cases := []struct {
		params url.Values
		want   string
	}{
		// Default stars critical: listing 3 (positive) is out, listing 2 has too few.
		{url.Values{"q": {"zorbleflux"}}, want(firefox[0], 5, firefox[1], 4, apple, 3)},
		{url.Values{"q": {"zorbleflux"}, "stars": {"all"}}, want(firefox[3], 6, firefox[0], 5, firefox[1], 4, apple, 3)},
		{url.Values{"q": {"zorbleflux"}, "stars": {"positive"}}, want(firefox[3], 6)},
		{url.Values{"q": {"zorbleflux"}, "store": {"apple"}}, want(apple, 3)},
		{url.Values{"q": {"zorbleflux crashes"}}, want(firefox[0], 5)},
		{url.Values{"q": {"crashes OR menu"}}, want(firefox[0], 5, firefox[1], 4)},
		{url.Values{"q": {`"quuxed badly"`}}, want(firefox[4], 3)},
		{url.Values{"q": {"zorbleflux*"}}, want(firefox[4], 6, firefox[0], 5, firefox[1], 4, apple, 3)[len(want(firefox[4], 6)):] + ""},
		{url.Values{"q": {"'; DROP TABLE reviews; --"}}, ""},
	}
	// The prefix also matches "zorblefluxing": listing 4 has 3 such reviews.
	cases[7].want = want(firefox[0], 5, firefox[1], 4, firefox[4], 3, apple, 3)
	for _, c := range cases {
		p, a := search(c.params)
		if got := ids(p); got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.params.Encode(), got, c.want)
		}
		if p.Partial || a.header.Get("Cache-Control") != "private, max-age=60" || a.header.Get("ETag") == "" {
			t.Errorf("%s: partial %v, Cache-Control %q", c.params.Encode(), p.Partial, a.header.Get("Cache-Control"))
		}
	}
	p, _ := search(url.Values{"q": {"zorbleflux"}})
	if p.Q != "zorbleflux" || p.Stars != "critical" || p.Hits[0].Name == nil || *p.Hits[0].Name != firefox[0].Name {
		t.Errorf("answer fields: %+v", p)
	}
	// The reviews table survived the query above.
	var n uint64
	if err := conn.QueryRow(context.Background(), "SELECT count() FROM reviews").Scan(&n); err != nil || n == 0 {
		t.Errorf("reviews after an injection attempt: %d %v", n, err)
	}

	// Paging: 60 hits, 50 a page, the cursor is bound to its query.
	first, _ := search(url.Values{"q": {"grumplewick"}})
	if len(first.Hits) != 50 || first.NextCursor == nil {
		t.Fatalf("page 1: %d hits, next %v", len(first.Hits), first.NextCursor)
	}
	second, _ := search(url.Values{"q": {"grumplewick"}, "cursor": {*first.NextCursor}})
	if len(second.Hits) != 10 || second.NextCursor != nil {
		t.Errorf("page 2: %d hits, next %v; want 10 and none", len(second.Hits), second.NextCursor)
	}
	seen := map[string]bool{}
	for _, h := range append(first.Hits, second.Hits...) {
		if seen[h.ID] {
			t.Errorf("listing %s on two pages", h.ID)
		}
		seen[h.ID] = true
	}
	problem(t, get(t, http.MethodGet, base+url.Values{"q": {"zorbleflux"}, "cursor": {*first.NextCursor}}.Encode()), http.StatusBadRequest)

	// At most 20 pages are offered, however many listings match.
	capped, pages := map[string]bool{}, 0
	for params := (url.Values{"q": {"snorfblatt"}}); ; {
		p, _ := search(params)
		pages++
		for _, h := range p.Hits {
			capped[h.ID] = true
		}
		if p.NextCursor == nil {
			break
		}
		params = url.Values{"q": {"snorfblatt"}, "cursor": {*p.NextCursor}}
	}
	if pages != 20 || len(capped) != 1000 {
		t.Errorf("1,010 matching listings: %d pages, %d listings; want 20 pages of 50", pages, len(capped))
	}

	// Filters by topic and category.
	tag := firefox[0].Topics
	if len(tag) > 0 {
		p, _ := search(url.Values{"q": {"zorbleflux"}, "tag": {tag[0]}, "store": {"firefox"}})
		found := false
		for _, h := range p.Hits {
			found = found || h.ID == firefox[0].ID
		}
		if !found {
			t.Errorf("tag %s: %s, want %s among the hits", tag[0], ids(p), firefox[0].ID)
		}
	}
	p, _ = search(url.Values{"q": {"zorbleflux"}, "store": {"firefox"}, "category": {firefox[0].Category}})
	if len(p.Hits) == 0 || p.Hits[0].ID != firefox[0].ID {
		t.Errorf("category %q: %s", firefox[0].Category, ids(p))
	}
	for _, h := range p.Hits {
		l := h.ID
		for _, f := range firefox {
			if f.ID == l && f.Category != firefox[0].Category {
				t.Errorf("category %q: hit %s is in %q", firefox[0].Category, l, f.Category)
			}
		}
	}

	// Malformed queries and parameters.
	for _, bad := range []url.Values{
		{},
		{"q": {`"open`}},
		{"q": {"OR x"}},
		{"q": {"x OR"}},
		{"q": {"a*b"}},
		{"q": {"x"}, "stars": {"bad"}},
		{"q": {"x"}, "store": {"nostore"}},
		{"q": {"x"}, "category": {"Tools"}},
		{"q": {"x"}, "cursor": {"not-a-cursor"}},
	} {
		problem(t, get(t, http.MethodGet, base+bad.Encode()), http.StatusBadRequest)
	}
	problem(t, get(t, http.MethodGet, base+url.Values{"q": {"x"}, "tag": {"no-such-topic"}}.Encode()), http.StatusNotFound)
	problem(t, get(t, http.MethodGet, base+url.Values{"q": {"x"}, "store": {"firefox"}, "category": {"No Such Category"}}.Encode()), http.StatusNotFound)
}

// TestReviewSearchCategoryBeforeFigures: a category is matched against the
// store's category list, which is computed in the background: 503 with
// Retry-After 60 until then, while a search without one answers.
func TestReviewSearchCategoryBeforeFigures(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg)
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r, err := analytics.LoadReplica(context.Background(), conn, analytics.ReplicaOptions{Generation: 1})
	if err != nil {
		t.Fatal(err)
	}
	h.State.Publish(&served.State{Replica: r}) // the replica, before its figures
	base := h.Base + "/api/v1/reviews/search?"
	a := get(t, http.MethodGet, base+url.Values{"q": {"good"}, "store": {"firefox"}, "category": {"Tools"}}.Encode())
	problem(t, a, http.StatusServiceUnavailable)
	if a.header.Get("Retry-After") != "60" {
		t.Errorf("Retry-After %q, want 60", a.header.Get("Retry-After"))
	}
	if a := get(t, http.MethodGet, base+url.Values{"q": {"good"}}.Encode()); a.status != http.StatusOK {
		t.Errorf("without category: %d %s", a.status, a.body)
	}
}

// TestReviewSearchInALargeCategory: a category of 50,000 listings is
// searched in one ClickHouse query. Inlined in the
// SQL text its ids passed ClickHouse's max_query_size and the search
// always failed; they now go beside the query as external data.
func TestReviewSearchInALargeCategory(t *testing.T) {
	const n = 50000
	cfg := seeded(t)
	at := time.Date(2026, 2, 28, 6, 0, 0, 0, time.UTC)
	listings := make([]analytics.ListingRow, n)
	snapshots := make([]analytics.SnapshotRow, n)
	users := uint64(1000)
	for i := range listings {
		id := fmt.Sprintf("huge-category-listing-%06d", i)
		listings[i] = analytics.ListingRow{Store: views.Chrome, ID: id, CrawledAt: at, Name: "Huge " + id, Developer: "Dev",
			Category: "Enormous", Kind: views.KindExtension, Version: "1.0", FirstSeen: at.AddDate(0, -1, 0)}
		snapshots[i] = analytics.SnapshotRow{Store: views.Chrome, ID: id, CrawledAt: at, Usage: &users}
	}
	cfg.Add(t, listings, snapshots)
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var reviews []analytics.ReviewRow
	for _, i := range []int{7, 49999} {
		for j := range 3 {
			reviews = append(reviews, analytics.ReviewRow{Store: views.Chrome, ListingID: listings[i].ID, ReviewID: fmt.Sprintf("huge-%d-%d", i, j),
				PostedAt: at, Stars: 1, Author: "A", Lang: "en", Text: "the frobnicator crashed", CrawledAt: at})
		}
	}
	if err := analytics.WriteReviews(context.Background(), conn, reviews); err != nil {
		t.Fatal(err)
	}
	// A budget that a busy machine does not reach: this test is of the
	// query's size, not of its time (TestSearchBudgets is). At the
	// default 1 s a CI run on a loaded machine answered partial.
	h := start(t, cfg, func(c *edge.Config) { c.SearchBudget = 30 * time.Second })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	a := get(t, http.MethodGet, h.Base+"/api/v1/reviews/search?"+url.Values{"q": {"frobnicator"}, "store": {"chrome"}, "category": {"Enormous"}}.Encode())
	if a.status != http.StatusOK {
		t.Fatalf("search in a category of %d listings: %d %s", n, a.status, a.body)
	}
	var page reviewSearchPage
	if err := json.Unmarshal(a.body, &page); err != nil || len(page.Hits) != 2 || page.Partial {
		t.Fatalf("hits %s", a.body)
	}
	for _, hit := range page.Hits {
		if hit.Matches != 3 || (hit.ID != listings[7].ID && hit.ID != listings[49999].ID) {
			t.Fatalf("hit %+v", hit)
		}
	}
}
