package replica

import (
	"fmt"
	"slices"
	"testing"
	"unsafe"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/viewstest"
)

// packed reports whether the n bytes at ptr lie in one of k's chunks.
func packed(k *pack, ptr unsafe.Pointer, n int) bool {
	at := uintptr(ptr)
	for _, c := range k.chunks {
		base := uintptr(unsafe.Pointer(unsafe.SliceData(c)))
		if at >= base && at+uintptr(n) <= base+uintptr(len(c)) {
			return true
		}
	}
	return false
}

// ownValues copies what a pack holds of each listing, to compare after a
// build moved it.
func ownValues(ls []views.Listing) []string {
	out := make([]string, 0, 6*len(ls))
	for i := range ls {
		l := &ls[i]
		for _, s := range ownStrings(l) {
			out = append(out, string([]byte(*s)))
		}
		out = append(out, l.Developer, string(*l.Hist.SparklineBytes()))
	}
	return out
}

// checkPacked fails t unless every own string, developer and sparkline of
// r's listings lives in r's packs or text arena.
func checkPacked(t *testing.T, r *Replica) {
	t.Helper()
	for i := range r.listings {
		l := &r.listings[i]
		for f, s := range ownStrings(l) {
			if len(*s) > 0 && !packed(&r.strs, unsafe.Pointer(unsafe.StringData(*s)), len(*s)) {
				t.Fatalf("listing %d: own string %d %q is not in the pack", i, f, *s)
			}
		}
		if sp := *l.Hist.SparklineBytes(); len(sp) > 0 && (!packed(&r.sparks, unsafe.Pointer(unsafe.SliceData(sp)), len(sp)) || cap(sp) != len(sp)) {
			t.Fatalf("listing %d: sparkline not in the pack, or with room to append (len %d cap %d)", i, len(sp), cap(sp))
		}
		d := l.Developer
		if len(d) > 0 && !r.text.Holds(d) {
			t.Fatalf("listing %d: developer %q is not in the developers' arena", i, d)
		}
	}
}

// packReplica is a replica big enough for its strings to fill a chunk
// worth keeping (packKeepSmall), with slugs, icons and developers.
func packReplica(t *testing.T, n int) *Replica {
	t.Helper()
	r := synthReplica(n, nil)
	b := BuilderFrom(r)
	for i := range b.listings {
		l := &b.listings[i]
		l.Icon = fmt.Sprintf("https://icons.example/%s.png", l.ID)
		l.Slug = fmt.Sprintf("slug-%d", i)
		l.Developer = fmt.Sprintf("Developer %d", i%1000)
	}
	return b.Build(r.Info())
}

func TestPackHoldsEveryOwnValue(t *testing.T) {
	r := packReplica(t, 40_000)
	want := ownValues(r.listings)
	checkPacked(t, r)
	if got := ownValues(r.listings); !slices.Equal(got, want) {
		t.Fatal("packing changed a value")
	}
	if r.strs.bytes() < packKeepSmall || len(r.sparks.chunks) == 0 {
		t.Fatalf("packs of %d and %d chunks, %d B of strings: too small for this test", len(r.strs.chunks), len(r.sparks.chunks), r.strs.bytes())
	}
}

// TestPackKeepsWhatIsStillUsed: a refresh that changes a few listings
// keeps the old chunks (unchanged values stay where they are, at no copy)
// and packs the changed values; one that changes most copies everything
// still used into new chunks, so that the old ones can be freed.
func TestPackKeepsWhatIsStillUsed(t *testing.T) {
	r1 := packReplica(t, 40_000)
	change := func(r *Replica, every int) *Replica {
		b := NewBuilder(0)
		for i := 0; i < r.Len(); i += every {
			l := r.listings[i]
			l.Icon = l.Icon + "?v=2"
			l.Version = "9.9." + fmt.Sprint(i)
			b.Add(&l)
		}
		return Merge(r, b, r.Info())
	}
	sameAddr := func(a, b string) bool { return unsafe.StringData(a) == unsafe.StringData(b) }

	few := change(r1, 100)
	checkPacked(t, few)
	for _, c := range r1.strs.chunks {
		if !slices.ContainsFunc(few.strs.chunks, func(d []byte) bool { return unsafe.SliceData(c) == unsafe.SliceData(d) }) {
			t.Fatal("a refresh of 1% of the listings dropped a chunk it still mostly uses")
		}
	}
	for i := range few.listings {
		l, o := &few.listings[i], &r1.listings[i]
		if !sameAddr(l.ID, o.ID) {
			t.Fatalf("listing %d: unchanged id copied", i)
		}
		if i%100 == 0 {
			if l.Icon != o.Icon+"?v=2" || sameAddr(l.Icon, o.Icon) {
				t.Fatalf("listing %d: icon %q, want the new one", i, l.Icon)
			}
		} else if !sameAddr(l.Icon, o.Icon) {
			t.Fatalf("listing %d: unchanged icon copied", i)
		}
	}

	// Half the icons and versions: under 3/4 of the chunk of icons and
	// slugs is still used, most of the chunk of ids and versions is.
	most := change(r1, 2)
	checkPacked(t, most)
	kept := 0
	for _, c := range r1.strs.chunks {
		if !slices.ContainsFunc(most.strs.chunks, func(d []byte) bool { return unsafe.SliceData(c) == unsafe.SliceData(d) }) {
			continue
		}
		kept++
		used := 0
		for i := range most.listings {
			for _, s := range ownStrings(&most.listings[i]) {
				if packed(&pack{chunks: [][]byte{c}}, unsafe.Pointer(unsafe.StringData(*s)), len(*s)) {
					used += len(*s)
				}
			}
		}
		if used*4 < len(c)*3 {
			t.Fatalf("a refresh of half the listings kept a chunk of which it uses %d of %d B", used, len(c))
		}
	}
	if kept == len(r1.strs.chunks) {
		t.Fatalf("a refresh of half the listings kept all %d chunks", kept)
	}
	if got, want := ownValues(most.listings)[6:12], ownValues(r1.listings)[6:12]; !slices.Equal(got, want) {
		t.Fatalf("an unchanged listing's values moved wrongly: %q, want %q", got, want)
	}
	if most.strs.bytes() > r1.strs.bytes()*3/2 {
		t.Fatalf("the new pack holds %d B for %d B of values", most.strs.bytes(), r1.strs.bytes())
	}
}

// TestPackMergesSmallChunks: chunks under packKeepSmall (a small replica,
// or the changes of one refresh) are copied into the next pack, so that
// refreshes do not leave a trail of small chunks.
func TestPackMergesSmallChunks(t *testing.T) {
	r := synthReplica(500, nil)
	for range 5 {
		b := NewBuilder(0)
		l := r.listings[7]
		l.Version += "+1"
		b.Add(&l)
		r = Merge(r, b, r.Info())
		checkPacked(t, r)
		if len(r.strs.chunks) != 1 {
			t.Fatalf("%d chunks, want the small ones merged into one", len(r.strs.chunks))
		}
	}
	if got := r.listings[7].Version; got != "1.2.3+1+1+1+1+1" {
		t.Fatalf("version %q after five refreshes", got)
	}
}

// synthReplica is a replica of n listings of viewstest.Synth.
func synthReplica(n int, shares []float64) *Replica {
	b := NewBuilder(n)
	for _, l := range viewstest.Synth(n, shares) {
		b.Add(&l)
	}
	return b.Build(Info{ReadingsMark: viewstest.Ref, HasHistory: true})
}
