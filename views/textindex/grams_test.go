package textindex

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
)

// searchAll searches every listing's name and description.
func (t *Index) searchAll(q string, withDesc bool, deadline time.Time) ([]uint64, bool) {
	return t.Search(q, withDesc, 0, t.listingLen, deadline)
}

// checkSearch compares a search of rep over [lo, hi) with testing each of
// those listings' strings by Unicode case folding.
func checkSearch(t *testing.T, rep *corpus, q string, withDesc bool, lo, hi int, how string) {
	t.Helper()
	got, partial := rep.text.Search(q, withDesc, lo, hi, time.Time{})
	defer PutBitmap(got)
	if partial {
		t.Fatalf("%s: q %q: partial without a deadline", how, q)
	}
	for i := lo; i < hi; i++ {
		l := &rep.listings[i]
		if has, want := got[i>>6]&(1<<(i&63)) != 0, matchText(l, q, withDesc); has != want {
			t.Fatalf("%s: q %q desc %v listing %d (name %q dev %q desc %q): got %v, want %v",
				how, q, withDesc, i, l.Name, l.Developer, l.Description, has, want)
		}
	}
}

// gramQueries are queries that reach every way of the trigram index: two
// ASCII bytes (the union around the pair), three (exact postings), longer
// ones (intersection and verification), multi-byte letters with and
// without case forms of their own length, and letters whose case forms
// have other lengths (k and the Kelvin sign, s and the long s).
var gramQueries = []string{"ab", "AB", "li", "a-", "9 ", "ks", "Ks", "cLi", "li9", "aaa", "k\u212a", "kelvin",
	"üb", "ÜB", "üü", "пп", "ПП", "ſs", "ss", "S ſ", "é é", "日日", "日", "ü", "a", "", "  ",
	"abcdefghijklmnopqrstuvwxyz", "ca-9", "sü", "ü ü", "iIi", "zz", "Bca"}

// TestGramSearchMatchesBruteForce checks that the trigram index finds what
// testing every listing finds, and what the scan found before the index was
// built, for queries of every kind, over several index chunks, in the
// whole replica and in each store's range.
func TestGramSearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	rep := textReplica(r, 2*gramChunkLen+gramChunkLen/3)
	queries := slices.Clone(gramQueries)
	for range 40 {
		queries = append(queries, randomText(r, 2+r.IntN(4)))
	}
	type key struct {
		q    string
		desc bool
	}
	scanned := map[key][]uint64{}
	for _, q := range queries {
		for _, desc := range []bool{false, true} {
			got, _ := rep.text.searchAll(q, desc, time.Time{})
			scanned[key{q, desc}] = slices.Clone(got)
			PutBitmap(got)
		}
	}
	if rep.text.names.grams() != nil {
		t.Fatal("the index was built before IndexText")
	}
	rep.IndexText()
	if rep.text.names.grams() == nil || rep.text.devs.grams() == nil {
		t.Fatal("IndexText built no index")
	}
	if g := rep.text.descs.grams(); rep.text.descFrom < rep.text.descTo && (g == nil || !g.covers(rep.text.descFrom, rep.text.descTo)) {
		t.Fatal("IndexText left the searched descriptions without an index")
	}
	if b := rep.TextIndexBytes(); b < rep.Len() || b > 64*rep.Len() {
		t.Errorf("the index holds %d bytes for %d listings of up to 11 characters", b, rep.Len())
	}
	for _, q := range queries {
		for _, desc := range []bool{false, true} {
			checkSearch(t, rep, q, desc, 0, rep.Len(), "index")
			got, _ := rep.text.searchAll(q, desc, time.Time{})
			if !slices.Equal(got, scanned[key{q, desc}]) {
				t.Fatalf("q %q desc %v: the index and the scan differ", q, desc)
			}
			PutBitmap(got)
		}
	}
	for _, s := range views.Stores {
		for _, q := range queries[:12] {
			checkSearch(t, rep, q, true, rep.storeStart[s], rep.storeStart[s+1], "store "+s.String())
		}
	}
}

// TestGramCandidatesVerified checks that a listing holding every trigram
// of a query but not the query is not found, and that one holding it in
// any case is.
func TestGramCandidatesVerified(t *testing.T) {
	ls := []views.Listing{
		{Store: views.Chrome, ID: "a", Name: "aba bab"}, {Store: views.Chrome, ID: "b", Name: "xABAB!"},
		{Store: views.Chrome, ID: "c", Name: "ab"}, {Store: views.Chrome, ID: "d", Name: "bab aba über"},
		{Store: views.Chrome, ID: "e", Name: "Üb"}, {Store: views.Chrome, ID: "f", Name: "x\u212aelvin"},
	}
	rep := newCorpus(ls)
	rep.IndexText()
	for _, c := range []struct{ q, want string }{{"abab", "b"}, {"ab", "abcd"}, {"ABA", "abd"}, {"aba ", "ad"},
		{"über", "d"}, {"üb", "de"}, {"kelvin", ""}, {"\u212aelvin", "f"}} {
		got, _ := rep.text.searchAll(c.q, false, time.Time{})
		var ids string
		for i := range rep.listings {
			if got[0]&(1<<i) != 0 {
				ids += rep.listings[i].ID
			}
		}
		if ids != c.want {
			t.Errorf("search %q found %q, want %q", c.q, ids, c.want)
		}
	}
}

// TestGramQuery checks what the index takes of a query.
func TestGramQuery(t *testing.T) {
	key := func(s string) uint32 { return gramKey(s[0], s[1], s[2]) }
	cases := []struct {
		q     string
		keys  []uint32
		exact bool
		two   bool
	}{
		{q: "Pro", keys: []uint32{key("pro")}, exact: true},
		{q: "ab", two: true},
		{q: "abab", keys: []uint32{key("aba"), key("bab")}},
		{q: "über", keys: []uint32{key("ber")}}, // ü and Ü differ in a byte: not in a key
		{q: "ks ü"},                             // k and s have forms of other lengths in a query that is not ASCII
		{q: "日", keys: []uint32{0xe697a5}},      // no case: its bytes are a key
		{q: "x"},
		{q: "üb"},
	}
	for _, c := range cases {
		g := newNeedle(c.q).grams
		if !slices.Equal(g.keys, c.keys) || g.exact != c.exact || g.two != c.two {
			t.Errorf("grams of %q: keys %x exact %v two %v, want %x %v %v", c.q, g.keys, g.exact, g.two, c.keys, c.exact, c.two)
		}
	}
}

// TestIndexTextConcurrent builds the index while searches run (go test
// -race checks that they share nothing unsafely).
func TestIndexTextConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	rep := textReplica(r, gramChunkLen+100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 20 {
			q := gramQueries[i%len(gramQueries)]
			checkSearch(t, rep, q, true, 0, rep.Len(), fmt.Sprint("during build ", i))
		}
	}()
	rep.IndexText()
	rep.IndexText()
	<-done
}

// FuzzTextSearch compares the search of any query, through the trigram
// index and by scanning, with testing every listing of a fixed replica.
func FuzzTextSearch(f *testing.F) {
	for _, q := range gramQueries {
		f.Add(q)
	}
	r := rand.New(rand.NewPCG(11, 12))
	scan := textReplica(r, 700)
	indexed := newCorpus(slices.Clone(scan.listings))
	indexed.IndexText()
	f.Fuzz(func(t *testing.T, q string) {
		if len(q) > 64 {
			return
		}
		for _, rep := range []*corpus{scan, indexed} {
			checkSearch(t, rep, q, true, 0, rep.Len(), "fuzz")
		}
	})
}

// TestNeedleMatches checks the verification of a candidate, by every path
// this build has (the vector scan, the SWAR scan, offset by offset),
// against ContainsFold: needles at every offset of segments of every
// length around the vector widths, in either case, and near misses.
func TestNeedleMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	letters := "abcdkKDA -."
	for range 3000 {
		seg := make([]byte, r.IntN(80))
		for i := range seg {
			seg[i] = letters[r.IntN(len(letters))]
		}
		q := make([]byte, 1+r.IntN(5))
		for i := range q {
			q[i] = letters[r.IntN(len(letters))]
		}
		if len(seg) >= len(q) && r.IntN(2) == 0 {
			copy(seg[r.IntN(len(seg)-len(q)+1):], q) // planted, maybe at the end
		}
		checkNeedle(t, string(seg), string(q))
	}
}

// checkNeedle compares every path of a needle's verification with
// ContainsFold.
func checkNeedle(t *testing.T, seg, q string) {
	t.Helper()
	n := newNeedle(q)
	want := ContainsFold(seg, q)
	if got := n.matches(seg); got != want {
		t.Fatalf("matches(%q) of %q = %v, want %v", seg, q, got, want)
	}
	if !n.ascii || len(q) == 0 {
		return
	}
	if got := n.matchesFrom(seg, 0); got != want {
		t.Fatalf("matchesFrom(%q) of %q = %v, want %v", seg, q, got, want)
	}
	if n.pair {
		if got := n.findPairSWAR(seg); got != want {
			t.Fatalf("findPairSWAR(%q) of %q = %v, want %v", seg, q, got, want)
		}
	}
}

// FuzzNeedleMatches compares the verification of any needle in any
// segment with ContainsFold.
func FuzzNeedleMatches(f *testing.F) {
	f.Add("A dark theme for every site, darker at night", "DARK")
	f.Add("x\u212aelvin", "kelvin")
	f.Add("", "a")
	f.Fuzz(func(t *testing.T, seg, q string) {
		if len(q) > 64 || len(seg) > 4096 {
			return
		}
		checkNeedle(t, seg, q)
	})
}

// BenchmarkNeedleMatches verifies a four-letter needle in a description
// of the seeder's length that holds it near its end.
func BenchmarkNeedleMatches(b *testing.B) {
	desc := strings.Repeat("Standard tools to mark, park and keep your tabs in order. ", 24) + "Dark mode."
	n := newNeedle("dark")
	for b.Loop() {
		if !n.matches(desc) {
			b.Fatal("no match")
		}
	}
}
