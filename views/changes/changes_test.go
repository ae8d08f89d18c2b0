package changes

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/edge-stats/edge/views"
)

func kinds(cs []Change) string {
	var s string
	for _, c := range cs {
		s += c.Kind.String() + " "
	}
	return s
}

// TestDiff checks each kind of change between two versions, and what is
// not a change.
func TestDiff(t *testing.T) {
	base := Meta{At: 100, Version: "1.0", Developer: "Ada", Name: "Tabs", Category: "Tools", ManifestVersion: 3, AccessLevel: 2,
		Permissions: []string{"storage", "tabs"}, HostAccess: []string{"https://example.com/*"}}
	cases := []struct {
		name  string
		store views.Store
		edit  func(m *Meta)
		want  string
		check func(t *testing.T, cs []Change)
	}{
		{"nothing", views.Chrome, func(m *Meta) {}, "", nil},
		{"version", views.Chrome, func(m *Meta) { m.Version = "1.1" }, "version ", func(t *testing.T, cs []Change) {
			if cs[0].Before != "1.0" || cs[0].After != "1.1" || cs[0].At != 200 {
				t.Errorf("version change %+v", cs[0])
			}
		}},
		{"permission added and removed", views.Chrome, func(m *Meta) { m.Permissions = []string{"tabs", "cookies", "history"} }, "permissions ",
			func(t *testing.T, cs []Change) {
				if a, r := cs[0].Added(), cs[0].Removed(); !slices.Equal(a, []string{"cookies", "history"}) || !slices.Equal(r, []string{"storage"}) {
					t.Errorf("added %v removed %v", a, r)
				}
			}},
		{"permissions reordered", views.Chrome, func(m *Meta) { m.Permissions = []string{"tabs", "storage"} }, "", nil},
		{"host access widened", views.Edge, func(m *Meta) { m.HostAccess = []string{"https://example.com/*", "<all_urls>"} }, "hostAccess ",
			func(t *testing.T, cs []Change) {
				if !cs[0].Widened || !slices.Equal(cs[0].Added(), []string{"<all_urls>"}) {
					t.Errorf("widening %+v", cs[0])
				}
			}},
		{"host access narrowed", views.Chrome, func(m *Meta) { m.HostAccess = nil }, "hostAccess ", func(t *testing.T, cs []Change) {
			if cs[0].Widened || !slices.Equal(cs[0].Removed(), []string{"https://example.com/*"}) {
				t.Errorf("narrowing %+v", cs[0])
			}
		}},
		{"manifest kinds only where manifests are read", views.Firefox, func(m *Meta) { m.Permissions = nil; m.ManifestVersion = 2; m.AccessLevel = 4 }, "", nil},
		{"unknown manifest version is no change", views.Chrome, func(m *Meta) { m.ManifestVersion = 0; m.AccessLevel = 0 }, "", nil},
		{"manifest version and access level", views.Chrome, func(m *Meta) { m.ManifestVersion = 2; m.AccessLevel = 4 }, "manifestVersion accessLevel ", nil},
		{"new owner, new name, new category", views.Apple, func(m *Meta) { m.Developer = "Eve"; m.Name = "Tabs+"; m.Category = "Games" }, "developer name category ", nil},
		{"featured", views.Chrome, func(m *Meta) { m.Featured = true }, "featured ", func(t *testing.T, cs []Change) {
			if cs[0].Before != "false" || cs[0].After != "true" {
				t.Errorf("featured %+v", cs[0])
			}
		}},
		{"delisted", views.GooglePlay, func(m *Meta) { m.Delisted = 150 }, "delisted ", func(t *testing.T, cs []Change) {
			if cs[0].After != "1970-01-01T00:02:30Z" {
				t.Errorf("delisted %+v", cs[0])
			}
		}},
		{"not read", views.Chrome, func(m *Meta) { *m = Meta{At: m.At} }, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			next := base
			next.At = 200
			next.Permissions = slices.Clone(base.Permissions)
			c.edit(&next)
			cs := Diff(nil, c.store, "x", &base, &next)
			if got := kinds(cs); got != c.want {
				t.Fatalf("kinds %q, want %q", got, c.want)
			}
			if c.check != nil {
				c.check(t, cs)
			}
		})
	}
	// And back: relisted.
	gone := base
	gone.Delisted = 150
	back := base
	back.At = 300
	if cs := Diff(nil, views.Chrome, "x", &gone, &back); kinds(cs) != "relisted " || cs[0].Before != "1970-01-01T00:02:30Z" {
		t.Errorf("relisted: %+v", cs)
	}
}

func TestParseKind(t *testing.T) {
	for _, k := range Kinds() {
		if got, ok := ParseKind(k.String()); !ok || got != k {
			t.Errorf("ParseKind(%q) = %v, %v", k, got, ok)
		}
	}
	if _, ok := ParseKind("Version"); ok {
		t.Error("kinds are case-sensitive")
	}
}

// randomLog returns n random changes over a few listings and times.
func randomLog(r *rand.Rand, n int) []Change {
	perms := []string{"tabs", "cookies", "storage"}
	cs := make([]Change, n)
	for i := range cs {
		c := Change{At: int64(r.IntN(50)), Store: views.Store(r.IntN(views.NumStores)), ID: fmt.Sprint("l", r.IntN(8)), Kind: Kind(1 + r.IntN(int(Takeover-1)))}
		if c.Kind == Permissions {
			c.Set, c.nAdded = []string{perms[r.IntN(3)], perms[r.IntN(3)]}, uint16(r.IntN(3))
		}
		cs[i] = c
	}
	return cs
}

// TestLogMatchesBruteForce pages the feed forward and backward, and each
// listing's changes, under random filters, and compares with filtering
// the sorted changes by hand.
func TestLogMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := range 40 {
		cs := randomLog(r, r.IntN(300))
		l := NewLog(slices.Clone(cs), 5)
		var want []Change
		for _, c := range cs {
			if c.At >= 5 {
				want = append(want, c)
			}
		}
		slices.SortFunc(want, func(a, b Change) int { return PosOf(&a).Compare(PosOf(&b)) })
		want = slices.CompactFunc(want, func(a, b Change) bool { return PosOf(&a) == PosOf(&b) })
		// With the takeovers they hold (their rule's tests: takeover_test.go).
		want = append(want, takeovers(want)...)
		slices.SortFunc(want, func(a, b Change) int { return PosOf(&a).Compare(PosOf(&b)) })
		if l.Len() != len(want) {
			t.Fatalf("round %d: %d changes, want %d", round, l.Len(), len(want))
		}
		var f Filter
		if r.IntN(2) == 0 {
			f.Stores = []views.Store{views.Store(r.IntN(views.NumStores))}
		}
		switch r.IntN(3) {
		case 0:
			f.Kinds = []Kind{Kind(1 + r.IntN(int(numKinds-1))), Permissions}
		case 1:
			f.Permission = "tabs"
		}
		var sel []Pos
		for i := range want {
			c := &want[i]
			keep := (len(f.Stores) == 0 || slices.Contains(f.Stores, c.Store)) &&
				(f.Permission != "" && c.Kind == Permissions && slices.Contains(c.Added(), f.Permission) ||
					f.Permission == "" && (len(f.Kinds) == 0 || slices.Contains(f.Kinds, c.Kind)))
			if keep != f.Keeps(c) {
				t.Fatalf("round %d: Keeps(%+v) = %v under %+v", round, c, !keep, f)
			}
			if keep {
				sel = append(sel, PosOf(c))
			}
		}
		limit := 1 + r.IntN(7)
		var fwd []Pos
		for pos := (Pos{}); ; {
			page, more := l.After(&f, pos, limit)
			for _, c := range page {
				fwd = append(fwd, PosOf(c))
			}
			if !more {
				break
			}
			pos = PosOf(page[len(page)-1])
		}
		if !slices.Equal(fwd, sel) {
			t.Fatalf("round %d: forward %v, want %v", round, fwd, sel)
		}
		var back []Pos
		for pos := (Pos{}); ; {
			page, more := l.Before(&f, pos, limit)
			for _, c := range page {
				back = append(back, PosOf(c))
			}
			if !more {
				break
			}
			pos = PosOf(page[len(page)-1])
		}
		slices.Reverse(back)
		if !slices.Equal(back, sel) {
			t.Fatalf("round %d: backward %v, want %v", round, back, sel)
		}
		s, id := views.Store(r.IntN(views.NumStores)), fmt.Sprint("l", r.IntN(8))
		var mine, got []Pos
		for i := len(want) - 1; i >= 0; i-- {
			if want[i].Store == s && want[i].ID == id {
				mine = append(mine, PosOf(&want[i]))
			}
		}
		for pos := (Pos{}); ; {
			page, more := l.Listing(s, id, pos, limit)
			for _, c := range page {
				got = append(got, PosOf(c))
			}
			if !more {
				break
			}
			pos = PosOf(page[len(page)-1])
		}
		if !slices.Equal(got, mine) {
			t.Fatalf("round %d: listing %v/%s %v, want %v", round, s, id, got, mine)
		}
	}
}

// TestWithKeepsTheWindow checks that a log with a refresh's changes drops
// those that left its window and keeps the old log unchanged.
func TestWithKeepsTheWindow(t *testing.T) {
	old := NewLog([]Change{{At: 10, ID: "a", Kind: Version}, {At: 20, ID: "a", Kind: Name}}, 0)
	next := old.With([]Change{{At: 30, ID: "b", Kind: Featured}}, 15)
	if old.Len() != 2 || next.Len() != 2 || next.At(0).At != 20 || next.At(1).ID != "b" || next.From() != 15 {
		t.Errorf("old %d changes, next %d: %+v", old.Len(), next.Len(), next.all)
	}
	if same := next.With(nil, 0); same != next {
		t.Error("nothing new: the same log")
	}
}
