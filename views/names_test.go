package views

import (
	"testing"
	"unsafe"
)

func TestCategorySlug(t *testing.T) {
	for name, want := range map[string]string{"Photos & Design": "photos-design", "Developer Tools": "developer-tools",
		"Developer tools": "developer-tools", "  Über—Alles!! ": "über-alles", "": "", "&&": ""} {
		if got := CategorySlug(name); got != want {
			t.Errorf("CategorySlug(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestFindCategoryAndTopic(t *testing.T) {
	ls := []Listing{mk(Chrome, "a", "Developer Tools", 10), mk(Edge, "b", "Developer tools", 5), mk(Chrome, "c", "Photos & Design", 7)}
	ls[0].Topics = []string{"vpn"}
	f := Build(NewReplica(ls, ReplicaInfo{Generation: 1, ReadingsMark: ref}), 0)
	chrome, edge := Chrome, Edge
	for _, c := range []struct {
		store *Store
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
	ls := []Listing{mk(Chrome, "a", "Developer Tools", 10), mk(Chrome, "b", "Developer Tools", 10),
		mk(Edge, "c", "Developer tools", 5), mk(Chrome, "d", "Photos", 7)}
	f := Build(NewReplica(ls, ReplicaInfo{Generation: 1, ReadingsMark: ref}), 0)
	cats := f.Summary().Cats
	if len(cats) != 2 || cats[0].Label != "Developer Tools" || cats[0].N != 3 || cats[1].Label != "Photos" {
		t.Fatalf("summary cats %+v, want Developer Tools with 3, then Photos", cats)
	}
	if len(f.AllCategories()) != 3 {
		t.Fatalf("all categories %+v: the lists of names keep each store's spelling", f.AllCategories())
	}
}

// TestInternerSharesLists checks that equal lists come back as one shared
// list, and that different lists, even with a hash collision, do not.
func TestInternerSharesLists(t *testing.T) {
	in := NewInterner()
	a := in.Strings([]string{"storage", "tabs"})
	b := in.Strings([]string{"storage", "tabs"})
	c := in.Strings([]string{"storage", "tab", "s"})
	d := in.Strings([]string{"storagetabs"})
	if &a[0] != &b[0] {
		t.Error("two equal lists are not shared")
	}
	if len(c) != 3 || len(d) != 1 || &c[0] == &a[0] || &d[0] == &a[0] {
		t.Errorf("different lists were merged: %q %q %q", a, c, d)
	}
	if unsafe.StringData(c[0]) != unsafe.StringData(a[0]) {
		t.Error("an element equal to another list's is not shared")
	}
	if in.Strings(nil) != nil || in.Strings([]string{}) != nil {
		t.Error("an empty list is not nil")
	}
}
