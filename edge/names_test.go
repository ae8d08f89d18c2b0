package edge_test

import (
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/edge-stats/edge/views"
)

// TestCategoryAndTagNamesOneRule: every v1 read that takes a category or a
// tag accepts a category's name in any case or its slug, and a tag's slug
// in any case, and gives the same answer for each spelling; a value that
// names nothing is a 404 that points to the list to choose from.
func TestCategoryAndTagNamesOneRule(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	f := h.State.Load().Figures
	var category string // a category of chrome whose slug differs from its name
	for _, c := range f.Categories(views.Chrome) {
		if views.CategorySlug(c.Name) != c.Name {
			category = c.Name
			break
		}
	}
	if category == "" || len(f.Topics()) == 0 {
		t.Fatal("the dataset has no category with a slug of its own, or no topic")
	}
	tag := f.Topics()[0].Slug
	spellings := []string{category, strings.ToLower(category), strings.ToUpper(category), views.CategorySlug(category)}
	ids := func(path string) []string {
		t.Helper()
		p := getOK[listPage](t, h.Base+path)
		out := []string{}
		for _, l := range p.Listings {
			out = append(out, l.ID)
		}
		return out
	}
	want := ids("/api/v1/listings?store=chrome&category=" + url.QueryEscape(category))
	if len(want) == 0 {
		t.Fatalf("no listing of chrome's %q", category)
	}
	for _, v := range spellings[1:] {
		if got := ids("/api/v1/listings?store=chrome&category=" + url.QueryEscape(v)); !reflect.DeepEqual(got, want) {
			t.Errorf("category=%q lists %v, want %v (as by its name)", v, got, want)
		}
	}
	type chart struct {
		Category *string
		Entries  []struct{ Position int }
	}
	byName := getOK[chart](t, h.Base+"/api/v1/charts/chrome?category="+url.QueryEscape(category))
	for _, v := range spellings[1:] {
		c := getOK[chart](t, h.Base+"/api/v1/charts/chrome?category="+url.QueryEscape(v))
		if c.Category == nil || *c.Category != category || len(c.Entries) != len(byName.Entries) {
			t.Errorf("chart of category %q: %v with %d entries, want %q with %d", v, c.Category, len(c.Entries), category, len(byName.Entries))
		}
	}
	wantTag := ids("/api/v1/listings?tag=" + tag)
	if got := ids("/api/v1/listings?tag=" + strings.ToUpper(tag)); !reflect.DeepEqual(got, wantTag) {
		t.Errorf("tag=%s lists %v, want %v", strings.ToUpper(tag), got, wantTag)
	}
	if a := get(t, "GET", h.Base+"/api/v1/tags/"+strings.ToUpper(tag)+"/chrome"); a.status != 200 || !strings.Contains(string(a.body), `"tag":"`+tag+`"`) {
		t.Errorf("/tags/%s/chrome: %d %.200s", strings.ToUpper(tag), a.status, a.body)
	}
	for path, list := range map[string]string{
		"/api/v1/listings?store=chrome&category=no-such-category": "/api/v1/categories/chrome",
		"/api/v1/listings?category=no-such-category":              "/api/v1/categories/{store}",
		"/api/v1/charts/chrome?category=no-such-category":         "/api/v1/categories/chrome",
		"/api/v1/reviews/search?q=great&store=chrome&category=no": "/api/v1/categories/chrome",
		"/api/v1/listings?tag=no-such-tag":                        "/api/v1/tags",
		"/api/v1/tags/no-such-tag/chrome":                         "/api/v1/tags",
		"/api/v1/reviews/search?q=great&tag=no-such-tag":          "/api/v1/tags",
	} {
		if d := problem(t, get(t, "GET", h.Base+path), http.StatusNotFound); !strings.Contains(d, list) {
			t.Errorf("%s: %q does not point to %s", path, d, list)
		}
	}
}

// TestSizesOfStoresNeverMixed: each listing and each store's statistics
// say what their size counts; /api/v1/listings without a store orders by
// the position within each store (every store's first, then every
// second...), never apple's ratings among chrome's users; sort=installs is
// the size, also on apple.
func TestSizesOfStoresNeverMixed(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	measure := map[string]string{"chrome": "users", "edge": "installs", "firefox": "daily users", "apple": "ratings", "googleplay": "installs"}
	type doc struct {
		Store, ID, SizeMeasure string
		Size, StoreRank        *int64
	}
	page := getOK[struct{ Listings []doc }](t, h.Base+"/api/v1/listings?limit=20")
	if len(page.Listings) != 20 {
		t.Fatalf("%d listings", len(page.Listings))
	}
	for i, l := range page.Listings {
		if l.SizeMeasure != measure[l.Store] {
			t.Errorf("%s/%s sizeMeasure %q, want %q", l.Store, l.ID, l.SizeMeasure, measure[l.Store])
		}
		if l.StoreRank == nil || *l.StoreRank != int64(i/5+1) {
			t.Errorf("listing %d across stores is %s/%s of rank %v; want every store's rank %d before the next rank", i, l.Store, l.ID, ptrString(l.StoreRank), i/5+1)
		}
	}
	for store, want := range measure {
		if st := getOK[struct{ SizeMeasure string }](t, h.Base+"/api/v1/stores/"+store+"/stats"); st.SizeMeasure != want {
			t.Errorf("%s stats sizeMeasure %q, want %q", store, st.SizeMeasure, want)
		}
	}
	apple := getOK[struct{ Listings []doc }](t, h.Base+"/api/v1/listings?store=apple&sort=installs&limit=3")
	if len(apple.Listings) == 0 || apple.Listings[0].StoreRank == nil || *apple.Listings[0].StoreRank != 1 {
		t.Errorf("apple by installs (its size, the ratings count): %+v, want its rank 1 first", apple.Listings)
	}
}
