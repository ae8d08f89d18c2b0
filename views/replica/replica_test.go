package replica

import (
	"fmt"
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/textindex"
)

func TestMerge(t *testing.T) {
	old := New([]views.Listing{
		{Store: views.Chrome, ID: "a", Name: "a1"}, {Store: views.Chrome, ID: "c", Name: "c1"}, {Store: views.Apple, ID: "9", Name: "old"},
	}, Info{Generation: 1})
	b := NewBuilder(0)
	for _, l := range []views.Listing{{Store: views.Chrome, ID: "b", Name: "b2"}, {Store: views.Chrome, ID: "c", Name: "c2"}, {Store: views.GooglePlay, ID: "x", Name: "x2"}} {
		b.Add(&l)
	}
	m := Merge(old, b, Info{Generation: 2})
	var got []string
	for _, l := range m.All() {
		got = append(got, l.Store.String()+"/"+l.ID+"="+l.Name)
	}
	want := []string{"chrome/a=a1", "chrome/b=b2", "chrome/c=c2", "apple/9=old", "googleplay/x=x2"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %v, want %v", got, want)
	}
	if m.Info().Generation != 2 || m.Lookup(views.Chrome, "b") == nil || m.Counts() != [views.NumStores]int{3, 0, 0, 1, 1} {
		t.Errorf("merged replica info %+v counts %v", m.Info(), m.Counts())
	}
	if old.Lookup(views.Chrome, "c").Name != "c1" || old.Len() != 3 {
		t.Error("Merge changed the old replica")
	}
}

func TestReplicaLookupAndDuplicates(t *testing.T) {
	ls := []views.Listing{
		{Store: views.Firefox, ID: "b", Name: "old"},
		{Store: views.Chrome, ID: "z"},
		{Store: views.Firefox, ID: "a"},
		{Store: views.Firefox, ID: "b", Name: "new"},
		{Store: views.GooglePlay, ID: "a"},
	}
	r := New(ls, Info{Generation: 3})
	if r.Len() != 4 {
		t.Fatalf("len %d, want 4 after dropping the duplicate", r.Len())
	}
	if got := r.Counts(); got != [views.NumStores]int{1, 0, 2, 0, 1} {
		t.Errorf("counts %v", got)
	}
	if l := r.Lookup(views.Firefox, "b"); l == nil || l.Name != "new" {
		t.Errorf("lookup firefox/b = %+v, want the later row", l)
	}
	for _, miss := range []struct {
		s  views.Store
		id string
	}{{views.Chrome, "a"}, {views.Edge, "z"}, {views.Store(9), "a"}, {views.Firefox, ""}} {
		if l := r.Lookup(miss.s, miss.id); l != nil {
			t.Errorf("lookup %v/%q found %+v", miss.s, miss.id, l)
		}
	}
	if ls := r.OfStore(views.Firefox); len(ls) != 2 || ls[0].ID != "a" || ls[1].ID != "b" {
		t.Errorf("firefox listings %+v", ls)
	}
}

// TestBuilderRangesAndParts checks the builder's key ranges (one store,
// [from, to), sharing the builder's listings) and that parts added in key
// order keep it sorted while a part out of order is refused.
func TestBuilderRangesAndParts(t *testing.T) {
	part := func(s views.Store, ids ...string) *Builder {
		b := NewBuilder(0)
		for i := len(ids) - 1; i >= 0; i-- { // out of order within a part
			b.Add(&views.Listing{Store: s, ID: ids[i]})
		}
		return b
	}
	b := NewBuilder(0)
	for _, p := range []*Builder{part(views.Chrome, "a", "b", "c"), part(views.Chrome, "d"), part(views.Edge, "a", "x")} {
		if err := b.AddPart(p); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.AddPart(part(views.Chrome, "z")); err == nil {
		t.Fatal("a part before the builder's last key was added")
	}
	ids := func(r *Builder) (out []string) {
		for _, l := range r.listings {
			out = append(out, l.Store.String()+"/"+l.ID)
		}
		return out
	}
	for _, c := range []struct {
		s        views.Store
		from, to string
		want     string
	}{
		{views.Chrome, "", "", "[chrome/a chrome/b chrome/c chrome/d]"},
		{views.Chrome, "b", "d", "[chrome/b chrome/c]"},
		{views.Chrome, "c", "", "[chrome/c chrome/d]"},
		{views.Edge, "", "b", "[edge/a]"},
		{views.Firefox, "", "", "[]"},
	} {
		if got := fmt.Sprint(ids(b.Range(c.s, c.from, c.to))); got != c.want {
			t.Errorf("Range(%s, %q, %q) = %s, want %s", c.s, c.from, c.to, got, c.want)
		}
	}
	b.Range(views.Chrome, "b", "c").Find(views.Chrome, "b").ReadAt = 42
	if b.Find(views.Chrome, "b").ReadAt != 42 {
		t.Error("a range does not share the builder's listings")
	}
}

// TestTextSharedWithTheReplicaItCameFrom checks that a replica built from
// another with only history changed shares its text and trigram indexes,
// and that one with a renamed listing copies the names (sharing the
// descriptions), has no names' index until IndexText, and finds the new
// name before and after.
func TestTextSharedWithTheReplicaItCameFrom(t *testing.T) {
	bare := synthReplica(3000, nil)
	bare.IndexText()
	b := BuilderFrom(bare)
	b.Find(bare.listings[7].Store, bare.listings[7].ID).Hist.SetClimbBase(views.Base{Value: 1, At: 1})
	full := b.Build(Info{})
	if !full.SharesText(bare) || !full.text.NamesIndexed() {
		t.Fatal("a replica with new history does not share its text and index")
	}
	for i := range full.listings {
		if unsafe.StringData(full.listings[i].Name) != unsafe.StringData(bare.listings[i].Name) {
			t.Fatalf("listing %d: the name was copied, not shared", i)
		}
	}
	b = BuilderFrom(full)
	b.Find(full.listings[9].Store, full.listings[9].ID).Name = "Quixotic"
	renamed := b.Build(Info{})
	if renamed.text.SharesNames(&full.text) || !renamed.text.SharesDescriptions(&full.text) || renamed.text.NamesIndexed() {
		t.Fatal("after a rename the names must be copied, unindexed, and the descriptions still shared")
	}
	for _, indexed := range []bool{false, true} {
		if indexed {
			renamed.IndexText()
		}
		got, _ := renamed.Text().Search("quixot", false, 0, renamed.Len(), time.Time{})
		if got[0]&(1<<9) == 0 {
			t.Fatalf("indexed %v: the renamed listing is not found by its new name", indexed)
		}
		textindex.PutBitmap(got)
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
