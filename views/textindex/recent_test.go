package textindex

import (
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/edge-stats/edge/views"
)

// checkRecent checks one search of r over rep's [lo, hi) against testing
// each listing: the listings of the range that match, and none outside.
func checkRecent(t *testing.T, r *Recent, rep *corpus, q string, withDesc bool, lo, hi int) {
	t.Helper()
	got, partial := r.Search(&rep.text, q, withDesc, lo, hi, time.Time{})
	defer PutBitmap(got)
	if partial {
		t.Fatalf("q %q: partial without a deadline", q)
	}
	for i := range rep.listings {
		want := i >= lo && i < hi && matchText(&rep.listings[i], q, withDesc)
		if has := got[i>>6]&(1<<(i&63)) != 0; has != want {
			t.Fatalf("q %q desc %v [%d, %d) listing %d: got %v, want %v", q, withDesc, lo, hi, i, has, want)
		}
	}
}

// TestRecentAnswersAsTheSearch checks that remembered searches answer what
// the search answers, in the whole replica and in every store's range,
// before and after the trigram index is built, and that a caller's
// writes to its bitmap do not reach what is remembered.
func TestRecentAnswersAsTheSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	rep := textReplica(rng, 3000)
	r := NewRecent(1 << 30)
	queries := slices.Clone(gramQueries)
	for range 6 {
		queries = append(queries, randomText(rng, 2+rng.IntN(3)))
	}
	ranges := [][2]int{{0, rep.Len()}, {-5, rep.Len() + 9}, {3, 70}}
	for _, s := range views.Stores {
		ranges = append(ranges, [2]int{rep.storeStart[s], rep.storeStart[s+1]})
	}
	for round := range 3 {
		if round == 2 {
			rep.IndexText()
		}
		for _, q := range queries {
			for _, desc := range []bool{false, true} {
				for _, lr := range ranges {
					checkRecent(t, r, rep, q, desc, lr[0], lr[1])
				}
			}
		}
		// Each distinct search ran once (a range past the replica's
		// ends is the whole replica's), and never again.
		if st := r.Stats(); st.Entries == 0 || st.Misses != int64(st.Entries) || st.Hits == 0 {
			t.Fatalf("round %d: %+v: want every search remembered once, then answered from memory", round, st)
		}
	}
	// A caller may write to its bitmap: the next caller gets the matches.
	got, _ := r.Search(&rep.text, "ab", true, 0, rep.Len(), time.Time{})
	for i := range got {
		got[i] = ^uint64(0)
	}
	PutBitmap(got)
	checkRecent(t, r, rep, "ab", true, 0, rep.Len())
}

// TestRecentKeepsItsOwnKeys: a query whose bytes belong to the caller (a
// request's buffer, reused after the answer) may change after the search;
// what is remembered stays under the text that was searched.
func TestRecentKeepsItsOwnKeys(t *testing.T) {
	rep := textReplica(rand.New(rand.NewPCG(15, 16)), 2000)
	r := NewRecent(1 << 30)
	buf := []byte("ab")
	got, _ := r.Search(&rep.text, unsafe.String(&buf[0], len(buf)), false, 0, rep.Len(), time.Time{})
	PutBitmap(got)
	copy(buf, "li") // the request's buffer, reused
	checkRecent(t, r, rep, "ab", false, 0, rep.Len())
	checkRecent(t, r, rep, "li", false, 0, rep.Len())
	if st := r.Stats(); st.Hits != 1 || st.Misses != 2 {
		t.Fatalf("%+v: want ab remembered under ab (one hit) and li searched", st)
	}
}

// TestRecentForgetsPartialSearches checks that a search cut by its
// deadline is not remembered: the next one runs whole.
func TestRecentForgetsPartialSearches(t *testing.T) {
	rep := textReplica(rand.New(rand.NewPCG(9, 10)), 3*searchChunk)
	r := NewRecent(1 << 30)
	got, partial := r.Search(&rep.text, "ab", true, 0, rep.Len(), time.Now().Add(-time.Second))
	PutBitmap(got)
	if !partial {
		t.Fatal("a search past its deadline was not partial")
	}
	if st := r.Stats(); st.Entries != 0 {
		t.Fatalf("a partial search was remembered: %+v", st)
	}
	checkRecent(t, r, rep, "ab", true, 0, rep.Len())
	if st := r.Stats(); st.Entries != 1 || st.Misses != 2 || st.Hits != 0 {
		t.Fatalf("after a complete search: %+v, want one entry from two misses", st)
	}
}

// TestRecentKeepsItsBound checks that a Recent never holds more than its
// bytes, lets go of the least recently used search first, and does not
// remember a search that would take more than a quarter of its room.
func TestRecentKeepsItsBound(t *testing.T) {
	rep := textReplica(rand.New(rand.NewPCG(11, 12)), 64*40)
	entry := 8*40 + 96 // 40 words of bitmap and the entry's overhead, for one-letter queries
	r := NewRecent(5*entry + 5)
	search := func(q string) {
		t.Helper()
		got, _ := r.Search(&rep.text, q, false, 0, rep.Len(), time.Time{})
		PutBitmap(got)
		if st := r.Stats(); st.Bytes > 5*entry+5 {
			t.Fatalf("after %q: %+v, past the bound", q, st)
		}
	}
	for _, q := range []string{"a", "b", "c", "d", "e"} {
		search(q)
	}
	search("a") // a hit: a is now the most recently used
	search("f") // lets go of b, the least recently used
	st := r.Stats()
	if st.Entries != 5 || st.Hits != 1 {
		t.Fatalf("%+v: want 5 entries and 1 hit", st)
	}
	search("a")
	search("b")
	if st2 := r.Stats(); st2.Hits != 2 || st2.Misses != st.Misses+1 {
		t.Fatalf("%+v then %+v: want a still remembered and b let go", st, st2)
	}
	small := NewRecent(4 * entry)
	got, _ := small.Search(&rep.text, "a", false, 0, rep.Len(), time.Time{})
	PutBitmap(got)
	if st := small.Stats(); st.Entries != 0 {
		t.Fatalf("a search of more than a quarter of the bound was remembered: %+v", st)
	}
}

// TestRecentConcurrent searches one Recent from several goroutines
// (run with -race): each answer stays right while entries come and go.
func TestRecentConcurrent(t *testing.T) {
	rep := textReplica(rand.New(rand.NewPCG(13, 14)), 4096)
	r := NewRecent(3 * (8*64 + 96))
	qs := []string{"a", "ab", "ü", "li", "k", "s"}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 60 {
				q := qs[(g+i)%len(qs)]
				got, _ := r.Search(&rep.text, q, true, 0, rep.Len(), time.Time{})
				for j := range rep.listings {
					if has, want := got[j>>6]&(1<<(j&63)) != 0, matchText(&rep.listings[j], q, true); has != want {
						t.Errorf("q %q listing %d: got %v, want %v", q, j, has, want)
						break
					}
				}
				PutBitmap(got)
			}
		})
	}
	wg.Wait()
}
