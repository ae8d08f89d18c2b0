package edge_test

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
)

type listPage struct {
	Listings []struct {
		Store, ID, Name string
		Size            *int64
		Topics          []string
	}
	NextCursor *string
}

func getList(t *testing.T, h *harness, query string) listPage {
	t.Helper()
	return getOK[listPage](t, h.Base+"/api/v1/listings?"+query)
}

func TestV1Listings(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	live := 0
	for _, l := range h.State.Load().Replica.All() {
		if l.Live() {
			live++
		}
	}
	// Following every cursor visits each live listing once.
	seen := map[string]bool{}
	query := "limit=37"
	pages := 0
	for {
		p := getList(t, h, query)
		pages++
		for _, l := range p.Listings {
			k := l.Store + "/" + l.ID
			if seen[k] {
				t.Fatalf("%s listed twice", k)
			}
			seen[k] = true
		}
		if p.NextCursor == nil {
			break
		}
		query = "limit=37&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if len(seen) != live || pages != (live+36)/37 {
		t.Fatalf("%d listings in %d pages, want %d live", len(seen), pages, live)
	}
	// Largest first by default; name A to Z.
	p := getList(t, h, "store=firefox")
	for i := 1; i < len(p.Listings); i++ {
		a, b := p.Listings[i-1].Size, p.Listings[i].Size
		if b != nil && (a == nil || *a < *b) {
			t.Fatalf("not largest first at %d", i)
		}
	}
	p = getList(t, h, "store=firefox&sort=name&limit=100")
	for i := 1; i < len(p.Listings); i++ {
		if p.Listings[i-1].Name > p.Listings[i].Name {
			t.Fatalf("name not A to Z at %d: %q > %q", i, p.Listings[i-1].Name, p.Listings[i].Name)
		}
	}
	// Filters.
	tag := h.State.Load().Figures.Topics()[0].Slug
	for _, l := range getList(t, h, "tag="+tag+"&limit=100").Listings {
		if !strings.Contains(strings.Join(l.Topics, ","), tag) {
			t.Fatalf("tag filter let through %v", l.Topics)
		}
	}
	for _, l := range getList(t, h, "store=edge&minSize=10&maxSize=1000&limit=100").Listings {
		if l.Store != "edge" || l.Size == nil || *l.Size < 10 || *l.Size > 1000 {
			t.Fatalf("size filter let through %+v", l)
		}
	}
	getList(t, h, "store=chrome&sort=rankclimb")
	// Cursor rules.
	first := getList(t, h, "store=chrome&limit=5")
	cur := url.QueryEscape(*first.NextCursor)
	if d := problem(t, get(t, "GET", h.Base+"/api/v1/listings?store=chrome&limit=6&cursor="+cur), http.StatusBadRequest); !strings.Contains(d, "limit=5") {
		t.Errorf("cursor with another limit: %q", d)
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/listings?store=edge&limit=5&cursor="+cur), http.StatusBadRequest)
	problem(t, get(t, "GET", h.Base+"/api/v1/listings?cursor=garbage"), http.StatusBadRequest)
	if next := getList(t, h, "store=chrome&cursor="+cur); len(next.Listings) != 5 || next.Listings[0].ID == first.Listings[0].ID {
		t.Error("a cursor without limit keeps its own page size")
	}
	for query, param := range map[string]string{
		"minSize=5": "minSize", "sort=rankclimb": "sort=rankclimb", "q=a": "q", "limit=0": "limit", "limit=101": "limit",
		"sort=best": "sort", "store=safari": "store", "order=up": "order", "store=edge&maxSize=-1": "maxSize",
	} {
		if d := problem(t, get(t, "GET", h.Base+"/api/v1/listings?"+query), http.StatusBadRequest); !strings.HasPrefix(d, param) {
			t.Errorf("?%s: detail %q does not start with %s", query, d, param)
		}
	}
	// At most 200 pages are offered.
	query, pages = "limit=1", 0
	for {
		p := getList(t, h, query)
		pages++
		if p.NextCursor == nil {
			break
		}
		query = "limit=1&cursor=" + url.QueryEscape(*p.NextCursor)
	}
	if pages != 200 {
		t.Errorf("%d pages offered, want 200", pages)
	}
}

// TestV1ListingsCursorAcrossRebuild: a cursor issued before a rebuild
// resumes after the last listing it returned, over HTTP. A listing larger
// than any other appears in the rebuild: it leads the first page now, and
// the cursor's page is the one it was before, not shifted by one.
func TestV1ListingsCursorAcrossRebuild(t *testing.T) {
	cfg := synthetic(t)
	h := start(t, cfg)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	ids := func(p listPage) []string {
		var s []string
		for _, l := range p.Listings {
			s = append(s, l.ID)
		}
		return s
	}
	first := getList(t, h, "store=firefox&limit=5")
	if first.NextCursor == nil {
		t.Fatal("no next page")
	}
	next := "store=firefox&limit=5&cursor=" + url.QueryEscape(*first.NextCursor)
	before := ids(getList(t, h, next))

	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	huge := uint64(1 << 40)
	cfg.Add(t, []analytics.ListingRow{{Store: views.Firefox, ID: "giant", Name: "Giant", CrawledAt: at, FirstSeen: at}},
		[]analytics.SnapshotRow{{Store: views.Firefox, ID: "giant", CrawledAt: at, Usage: &huge}})
	gen := h.State.Load().Replica.Info().Generation
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if h.State.Load().Replica.Info().Generation == gen {
		t.Fatal("the rebuild published no new generation")
	}
	if got := ids(getList(t, h, "store=firefox&limit=5")); got[0] != "giant" {
		t.Fatalf("first page after the rebuild: %v, want giant first", got)
	}
	if after := ids(getList(t, h, next)); !slices.Equal(after, before) {
		t.Errorf("the cursor's page after the rebuild: %v, want %v as before it", after, before)
	}
}

// TestForgedListCursors attacks the listings cursor through HTTP: a real
// nextCursor re-encoded with a page size of a million (its query hash left
// right, as anyone can compute it), a page count past the cap, and a
// negative one are 400s, not a page of every listing.
func TestForgedListCursors(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	p := getList(t, h, "limit=5")
	if p.NextCursor == nil {
		t.Fatal("no cursor")
	}
	raw, err := base64.RawURLEncoding.DecodeString(*p.NextCursor)
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range [][2]string{{`"l":5,`, `"l":1000000,`}, {`"p":1,`, `"p":1099511627776,`}, {`"p":1,`, `"p":-5,`}} {
		if !strings.Contains(string(raw), edit[0]) {
			t.Fatalf("cursor %s has no %s", raw, edit[0])
		}
		forged := base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(raw), edit[0], edit[1], 1)))
		if d := problem(t, get(t, "GET", h.Base+"/api/v1/listings?cursor="+forged), http.StatusBadRequest); !strings.HasPrefix(d, "cursor:") {
			t.Errorf("cursor with %s: %q", edit[1], d)
		}
	}
}

// TestForgedReviewCursors attacks the two review cursors through HTTP:
// pages out of bounds, a page count that overflows, an empty review id,
// garbage and a cursor of 100 KB are 400s that say so, before any read.
func TestForgedReviewCursors(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	l := firstLive(t, h, views.Firefox)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	forged := []string{enc(`{"q":"critical\u0000","p":0,"t":1,"i":"r"}`), enc(`{"q":"critical\u0000","p":9223372036854775807,"t":1,"i":"r"}`),
		enc(`{"q":"critical\u0000","p":1,"t":1,"i":""}`), enc(`{"q":"x","p":-1}`), enc(`{"q":"x","p":1e400}`), "%%%", strings.Repeat("A", 100_000)}
	for _, base := range []string{h.Base + "/api/v1/listings/firefox/" + l.ID + "/reviews?cursor=", h.Base + "/api/v1/reviews/search?q=crash&cursor="} {
		for _, c := range forged {
			a := get(t, "GET", base+c)
			if a.status == http.StatusRequestHeaderFieldsTooLarge || a.status == http.StatusRequestURITooLong {
				continue // refused by the server before any parsing
			}
			if d := problem(t, a, http.StatusBadRequest); !strings.HasPrefix(d, "cursor:") {
				t.Errorf("%s%.40s: %q", base, c, d)
			}
		}
	}
}

// TestEverySortListsEveryListing pages /api/v1/listings to its end for
// every sort it offers, in both directions, for every store: each lists
// every live listing of the store once, whatever the sort, those without
// a value for it last (the set of rows never depends on the sort).
func TestEverySortListsEveryListing(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	for _, s := range views.Stores {
		live := 0
		for _, l := range h.State.Load().Replica.OfStore(s) {
			if l.Live() {
				live++
			}
		}
		for _, sort := range listq.V1SortNames() {
			for _, order := range []string{"desc", "asc"} {
				seen := map[string]bool{}
				query := "store=" + s.String() + "&sort=" + sort + "&order=" + order + "&limit=100"
				for {
					p := getList(t, h, query)
					for _, l := range p.Listings {
						if seen[l.ID] {
							t.Fatalf("%s %s %s: %s listed twice", s, sort, order, l.ID)
						}
						seen[l.ID] = true
					}
					if p.NextCursor == nil {
						break
					}
					query = "store=" + s.String() + "&sort=" + sort + "&order=" + order + "&limit=100&cursor=" + url.QueryEscape(*p.NextCursor)
				}
				if len(seen) != live {
					t.Errorf("%s sort=%s order=%s: %d listings, want every live one (%d)", s, sort, order, len(seen), live)
				}
			}
		}
	}
}
