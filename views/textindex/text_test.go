package textindex

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/edge-stats/edge/views"
)

// randomText returns text drawn from a small alphabet with both cases,
// digits, punctuation and multi-byte letters, so that short queries match
// often, across segment boundaries too.
func randomText(r *rand.Rand, n int) string {
	parts := []string{"a", "B", "c", "L", "i", "I", "k", "s", "S", " ", "-", "9", "ü", "Ü", "П", "п", "ſ", "é", "É", "日", "\u212a"}
	var b strings.Builder
	for range n {
		b.WriteString(parts[r.IntN(len(parts))])
	}
	return b.String()
}

// textReplica is a replica of n listings with random names, developers
// (few distinct) and descriptions, some of them empty.
func textReplica(r *rand.Rand, n int) *corpus {
	devs := make([]string, 1+n/20)
	for i := range devs {
		devs[i] = randomText(r, r.IntN(6))
	}
	ls := make([]views.Listing, n)
	for i := range ls {
		ls[i] = views.Listing{Store: views.Store(r.IntN(views.NumStores)), ID: fmt.Sprintf("%08d", i),
			Name: randomText(r, r.IntN(12)), Developer: devs[r.IntN(len(devs))],
			Description: randomText(r, r.IntN(40))}
	}
	return newCorpus(ls)
}

// TestTextSearchMatchesBruteForce compares the index's answer for many
// queries with testing every listing's strings by Unicode case folding.
func TestTextSearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	rep := textReplica(r, 5000)
	queries := []string{"ab", "AB", "li", "LI", "ii", "9-", " s", "ks", "KS", "üb", "ÜB", "пп", "ПП", "ſs", "ss", "aaa", "cLi", "li9", "é é", "日日",
		"abcdefghijklmnopqrstuvwxyz", "a-9", "sü", "ü ü", "x", "zz"}
	for range 200 {
		queries = append(queries, randomText(r, 2+r.IntN(3)))
	}
	for _, q := range queries {
		for _, withDesc := range []bool{false, true} {
			got, _ := rep.text.searchAll(q, withDesc, time.Time{})
			for i := range rep.listings {
				l := &rep.listings[i]
				want := matchText(l, q, withDesc)
				if has := got[i>>6]&(1<<(i&63)) != 0; has != want {
					t.Fatalf("q %q desc %v listing %d (name %q dev %q desc %q): got %v, want %v", q, withDesc, i, l.Name, l.Developer, l.Description, has, want)
				}
			}
		}
	}
}

// TestTextSearchPaths checks the scan's three ways of testing candidates
// (all-ASCII in place, mixed by segment, no pair at all) on text built to
// hit each, including a match in the last bytes of the arena.
func TestTextSearchPaths(t *testing.T) {
	ls := []views.Listing{
		{Store: views.Chrome, ID: "a", Name: "Dark Reader", Developer: "Alexander", Description: "Über dark mode"},
		{Store: views.Chrome, ID: "b", Name: "", Developer: "", Description: ""},
		{Store: views.Edge, ID: "c", Name: "ПОГОДА", Developer: "Dev", Description: strings.Repeat("x", 100) + "needle"},
		{Store: views.Apple, ID: "d", Name: "Maps", Developer: "Alexander", Description: "needle in apple"},
		{Store: views.GooglePlay, ID: "e", Name: "KELVIN", Developer: "x", Description: ""},
	}
	rep := newCorpus(ls)
	cases := []struct {
		q        string
		withDesc bool
		want     string // ids
	}{
		{"dark", false, "a"},
		{"DARK", true, "a"},
		{"alex", false, "ad"},
		{"über", true, "a"},
		{"ÜBER", true, "a"},
		{"über", false, ""},
		{"погода", false, "c"},
		{"needle", true, "c"}, // not apple's description
		{"le", true, "ad"},    // two characters: names and developers only
		{"kelvin", false, "e"},
		{"zz", true, ""},
	}
	for _, c := range cases {
		bits, _ := rep.text.searchAll(c.q, c.withDesc, time.Time{})
		var got strings.Builder
		for i := range rep.listings {
			if bits[i>>6]&(1<<(i&63)) != 0 {
				got.WriteString(rep.listings[i].ID)
			}
		}
		if got.String() != c.want {
			t.Errorf("search(%q, %v) = %q, want %q", c.q, c.withDesc, got.String(), c.want)
		}
	}
	// The replica's strings point into the index and keep their values.
	if rep.listings[0].Name != "Dark Reader" || rep.listings[0].Description != "Über dark mode" {
		t.Errorf("listing text changed: %q %q", rep.listings[0].Name, rep.listings[0].Description)
	}
}

func TestNewNeedle(t *testing.T) {
	cases := []struct {
		q      string
		pair   bool
		p0, p1 int
	}{
		{"ab", true, 0, 1},
		{"Hello", true, 0, 4},
		{"üb", true, 0, 2},   // ü and Ü differ in their second byte only
		{"über", true, 0, 4}, //
		{"ски", true, 2, 5},  // с and С differ in both bytes: two values each
		{"ks ü", true, 2, 4}, // k and s have case forms of other lengths (K, ſ)
		{"ks", true, 0, 1},   // but an all-ASCII query matches ASCII only
		{"ſſ", false, 0, 0},  // no letter with same-length forms
		{"日", true, 0, 2},    // no case: one value a byte
	}
	for _, c := range cases {
		n := newNeedle(c.q)
		if n.pair != c.pair || (c.pair && (n.p0 != c.p0 || n.p1 != c.p1)) {
			t.Errorf("newNeedle(%q): pair %v %d..%d, want %v %d..%d", c.q, n.pair, n.p0, n.p1, c.pair, c.p0, c.p1)
		}
	}
}

// TestTextSearchDeadline checks the time budget: a search whose deadline
// has passed stops before its first chunk and says partial; one with time
// to spare finds what a search without a deadline finds.
func TestTextSearchDeadline(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	rep := textReplica(r, 3*searchChunk)
	full, partial := rep.text.searchAll("ab", true, time.Time{})
	if partial {
		t.Fatal("a search without a deadline said partial")
	}
	spare, partial := rep.text.searchAll("ab", true, time.Now().Add(time.Hour))
	if partial || !slices.Equal(spare, full) {
		t.Errorf("a search with time to spare: partial %v, same matches %v", partial, slices.Equal(spare, full))
	}
	late, partial := rep.text.searchAll("ab", true, time.Now().Add(-time.Second))
	if !partial {
		t.Fatal("a search past its deadline did not say partial")
	}
	for w, b := range late {
		if b != 0 {
			t.Fatalf("a search past its deadline scanned text: word %d is %x", w, b)
		}
	}
}

// corpus is what a replica gives its text index: listings sorted by store
// and id, and the index built over them.
type corpus struct {
	listings   []views.Listing
	text       Index
	storeStart [views.NumStores + 1]int
}

// newCorpus sorts ls as a replica does and indexes their text.
func newCorpus(ls []views.Listing) *corpus {
	slices.SortFunc(ls, func(a, b views.Listing) int {
		return cmp.Or(cmp.Compare(a.Store, b.Store), strings.Compare(a.ID, b.ID))
	})
	c := &corpus{listings: ls}
	for s := range c.storeStart {
		c.storeStart[s] = sort.Search(len(ls), func(i int) bool { return int(ls[i].Store) >= s })
	}
	c.text = Build(ls, nil)
	return c
}

func (c *corpus) Len() int            { return len(c.listings) }
func (c *corpus) IndexText()          { c.text.BuildGrams() }
func (c *corpus) TextIndexBytes() int { return c.text.GramBytes() }

// matchText is the plain test a search must agree with: q in the name or
// developer, or with withDesc and three characters or more, in a
// searched description, ignoring case.
func matchText(l *views.Listing, q string, withDesc bool) bool {
	if ContainsFold(l.Name, q) || ContainsFold(l.Developer, q) {
		return true
	}
	return withDesc && utf8.RuneCountInString(q) >= 3 && descSearched(l.Store) && ContainsFold(l.Description, q)
}

func TestContainsFold(t *testing.T) {
	for _, c := range []struct {
		s, sub string
		want   bool
	}{
		{"Smart Tab Manager", "tab", true},
		{"Smart Tab Manager", "TAB M", true},
		{"Smart Tab Manager", "tabs", false},
		{"abc", "", true},
		{"", "a", false},
		{"Éclair Café", "café", true},
		{"Éclair", "éCL", true},
		{"Kelvin", "kel", true},
		{"Straße", "STRASSE", false}, // simple folding only, as strings.EqualFold
		{"x1.2y", "1.2", true},
		{"aaab", "aab", true},
		{"AAAB", "aab", true},
		{"ab", "abc", false},
	} {
		if got := ContainsFold(c.s, c.sub); got != c.want {
			t.Errorf("ContainsFold(%q, %q) = %v", c.s, c.sub, got)
		}
	}
}
