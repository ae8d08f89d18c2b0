package views

import (
	"fmt"
	"testing"
	"time"
)

func TestListingFigures(t *testing.T) {
	var l Listing
	if _, ok := l.Usage(); ok {
		t.Error("zero listing has a usage figure")
	}
	if _, ok := l.Rating(); ok {
		t.Error("zero listing is rated")
	}
	l.SetUsage(0, true)
	if v, ok := l.Usage(); !ok || v != 0 {
		t.Errorf("usage 0 read back as %d, %v", v, ok)
	}
	l.SetRating(4.37, true)
	if v, ok := l.Rating(); !ok || RoundRating(v) != 4.37 {
		t.Errorf("rating 4.37 read back as %v, %v", v, ok)
	}
	l.SetRatingCount(12, true)
	l.Store = Apple
	if v, ok := l.Size(); !ok || v != 12 {
		t.Errorf("apple size %d, %v; want its rating count 12", v, ok)
	}
	l.Store = Chrome
	if v, ok := l.Size(); !ok || v != 0 {
		t.Errorf("chrome size %d, %v; want its usage 0", v, ok)
	}
	l.SetUsage(5, false)
	if _, ok := l.Size(); ok {
		t.Error("missing usage gives a size")
	}
}

func TestDay(t *testing.T) {
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "2026-01-01"},
		{time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC), "2025-12-31"},
		{time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), "1969-12-31"},
		{time.Date(2026, 1, 1, 1, 0, 0, 0, time.FixedZone("x", 2*3600)), "2025-12-31"},
	} {
		if got := DayOf(c.at).String(); got != c.want {
			t.Errorf("DayOf(%v) = %s, want %s", c.at, got, c.want)
		}
	}
	if NoDay.Valid() || NoDay.String() != "" {
		t.Error("NoDay is a date")
	}
}

func TestReplicaLookupAndDuplicates(t *testing.T) {
	ls := []Listing{
		{Store: Firefox, ID: "b", Name: "old"},
		{Store: Chrome, ID: "z"},
		{Store: Firefox, ID: "a"},
		{Store: Firefox, ID: "b", Name: "new"},
		{Store: GooglePlay, ID: "a"},
	}
	r := NewReplica(ls, ReplicaInfo{Generation: 3})
	if r.Len() != 4 {
		t.Fatalf("len %d, want 4 after dropping the duplicate", r.Len())
	}
	if got := r.Counts(); got != [NumStores]int{1, 0, 2, 0, 1} {
		t.Errorf("counts %v", got)
	}
	if l := r.Lookup(Firefox, "b"); l == nil || l.Name != "new" {
		t.Errorf("lookup firefox/b = %+v, want the later row", l)
	}
	for _, miss := range []struct {
		s  Store
		id string
	}{{Chrome, "a"}, {Edge, "z"}, {Store(9), "a"}, {Firefox, ""}} {
		if l := r.Lookup(miss.s, miss.id); l != nil {
			t.Errorf("lookup %v/%q found %+v", miss.s, miss.id, l)
		}
	}
	if ls := r.OfStore(Firefox); len(ls) != 2 || ls[0].ID != "a" || ls[1].ID != "b" {
		t.Errorf("firefox listings %+v", ls)
	}
}

func TestParseStore(t *testing.T) {
	for i, name := range []string{"chrome", "edge", "firefox", "apple", "googleplay"} {
		s, err := ParseStore(name)
		if err != nil || s != Store(i) || s.String() != name {
			t.Errorf("ParseStore(%q) = %v, %v", name, s, err)
		}
	}
	for _, bad := range []string{"", "Chrome", "safari", "0"} {
		if _, err := ParseStore(bad); err == nil {
			t.Errorf("ParseStore(%q) accepted", bad)
		}
	}
}

func TestListingDocNulls(t *testing.T) {
	var l Listing
	l.Store, l.ID, l.FirstSeen = Apple, "1", 1
	d := NewListingDoc(&l, nil)
	if d.Slug != nil || d.Size != nil || d.Rating != nil || d.Stars != nil || d.Updated != nil ||
		d.ManifestVersion != nil || d.AccessLevel != nil || d.WeeklyDownloads != nil || d.ReadAt != nil {
		t.Errorf("missing values not null: %+v", d)
	}
	if d.Permissions == nil || d.Topics == nil || d.HostAccess == nil {
		t.Error("empty lists must be [] not null")
	}
	l.Store = Chrome
	l.SetRating(4.369999885559082, true)
	if d := NewListingDoc(&l, nil); d.AccessLevel == nil || *d.AccessLevel != 0 || d.Rating == nil || *d.Rating != 4.37 {
		t.Errorf("chrome doc: access level %v rating %v", d.AccessLevel, d.Rating)
	}
}

// TestBuilderRangesAndParts checks the builder's key ranges (one store,
// [from, to), sharing the builder's listings) and that parts added in key
// order keep it sorted while a part out of order is refused.
func TestBuilderRangesAndParts(t *testing.T) {
	part := func(s Store, ids ...string) *ReplicaBuilder {
		b := NewReplicaBuilder(0)
		for i := len(ids) - 1; i >= 0; i-- { // out of order within a part
			b.Add(&Listing{Store: s, ID: ids[i]})
		}
		return b
	}
	b := NewReplicaBuilder(0)
	for _, p := range []*ReplicaBuilder{part(Chrome, "a", "b", "c"), part(Chrome, "d"), part(Edge, "a", "x")} {
		if err := b.AddPart(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddPart(part(Chrome, "z")); err == nil {
		t.Fatal("a part before the builder's last key was added")
	}
	ids := func(r *ReplicaBuilder) (out []string) {
		for _, l := range r.listings {
			out = append(out, l.Store.String()+"/"+l.ID)
		}
		return out
	}
	for _, c := range []struct {
		s        Store
		from, to string
		want     string
	}{
		{Chrome, "", "", "[chrome/a chrome/b chrome/c chrome/d]"},
		{Chrome, "b", "d", "[chrome/b chrome/c]"},
		{Chrome, "c", "", "[chrome/c chrome/d]"},
		{Edge, "", "b", "[edge/a]"},
		{Firefox, "", "", "[]"},
	} {
		if got := fmt.Sprint(ids(b.Range(c.s, c.from, c.to))); got != c.want {
			t.Errorf("Range(%s, %q, %q) = %s, want %s", c.s, c.from, c.to, got, c.want)
		}
	}
	b.Range(Chrome, "b", "c").Find(Chrome, "b").ReadAt = 42
	if b.Find(Chrome, "b").ReadAt != 42 {
		t.Error("a range does not share the builder's listings")
	}
}
