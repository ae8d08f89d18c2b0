package figures

import (
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
)

func TestCategorySlug(t *testing.T) {
	for name, want := range map[string]string{"Photos & Design": "photos-design", "Developer Tools": "developer-tools",
		"Developer tools": "developer-tools", "  Über—Alles!! ": "über-alles", "": "", "&&": ""} {
		if got := views.CategorySlug(name); got != want {
			t.Errorf("CategorySlug(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestFindCategoryAndTopic(t *testing.T) {
	ls := []views.Listing{mk(views.Chrome, "a", "Developer Tools", 10), mk(views.Edge, "b", "Developer tools", 5), mk(views.Chrome, "c", "Photos & Design", 7)}
	ls[0].Topics = []string{"vpn"}
	f := Build(replica.New(ls, replica.Info{Generation: 1, ReadingsMark: ref}), 0)
	chrome, edge := views.Chrome, views.Edge
	for _, c := range []struct {
		store *views.Store
		v     string
		want  string
		ok    bool
	}{
		{&chrome, "Developer Tools", "Developer Tools", true},
		{&chrome, "developer tools", "Developer Tools", true},
		{&chrome, "developer-tools", "Developer Tools", true},
		{&edge, "developer-tools", "Developer tools", true},
		{&chrome, "photos-design", "Photos & Design", true},
		{&edge, "photos-design", "", false},
		{nil, "PHOTOS & DESIGN", "Photos & Design", true},
		{&chrome, "", "", false},
		{&chrome, "tools", "", false},
	} {
		if got, ok := f.FindCategory(c.store, c.v); got != c.want || ok != c.ok {
			t.Errorf("FindCategory(%v, %q) = %q, %v; want %q, %v", c.store, c.v, got, ok, c.want, c.ok)
		}
	}
	if slug, ok := f.FindTopic(" VPN "); !ok || slug != "vpn" {
		t.Errorf("FindTopic(VPN) = %q, %v", slug, ok)
	}
	if _, ok := f.FindTopic("proxy"); ok {
		t.Error("an unknown topic was found")
	}
}

// TestSummaryMergesSpellingsOfACategory: chrome's "Developer Tools" and
// edge's "Developer tools" are one category of the summary, named as most
// of its listings spell it.
func TestSummaryMergesSpellingsOfACategory(t *testing.T) {
	ls := []views.Listing{mk(views.Chrome, "a", "Developer Tools", 10), mk(views.Chrome, "b", "Developer Tools", 10),
		mk(views.Edge, "c", "Developer tools", 5), mk(views.Chrome, "d", "Photos", 7)}
	f := Build(replica.New(ls, replica.Info{Generation: 1, ReadingsMark: ref}), 0)
	cats := f.Summary().Cats
	if len(cats) != 2 || cats[0].Label != "Developer Tools" || cats[0].N != 3 || cats[1].Label != "Photos" {
		t.Fatalf("summary cats %+v, want Developer Tools with 3, then Photos", cats)
	}
	if len(f.AllCategories()) != 3 {
		t.Fatalf("all categories %+v: the lists of names keep each store's spelling", f.AllCategories())
	}
}
