package radix

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRadixSortMatchesStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 100, 70000} {
		items := make([]Item, n)
		for i := range items {
			var k int64
			switch r.IntN(4) {
			case 0:
				k = int64(r.Uint64())
			case 1:
				k = int64(r.IntN(10)) - 5 // many ties, negatives
			case 2:
				k = int64(r.IntN(1 << 20))
			default:
				k = -int64(r.Uint32())
			}
			items[i] = Item{Key: DescKey(k), Index: int32(i)}
		}
		want := slices.Clone(items)
		slices.SortStableFunc(want, func(a, b Item) int { return cmp.Compare(a.Key, b.Key) })
		Sort(items)
		if !slices.Equal(items, want) {
			t.Fatalf("n=%d: radix order differs from a stable sort", n)
		}
	}
	// DescKey orders signed keys largest first.
	ks := []int64{-5, 3, 0, 1 << 62, -(1 << 62), 7}
	items := []Item{}
	for i, k := range ks {
		items = append(items, Item{DescKey(k), int32(i)})
	}
	Sort(items)
	var got []int64
	for _, it := range items {
		got = append(got, ks[it.Index])
	}
	if !slices.Equal(got, []int64{1 << 62, 7, 3, 0, -5, -(1 << 62)}) {
		t.Errorf("descending order %v", got)
	}
}

func TestRadixSortBitsMatchesStableSort(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, c := range []struct {
		n        int
		from, to uint
	}{{0, 0, 8}, {1, 3, 9}, {2, 0, 64}, {1000, 10, 19}, {70000, 17, 64}, {70000, 20, 41}, {5000, 0, 33}} {
		items := make([]uint64, c.n)
		for i := range items {
			k := r.Uint64()
			if c.to < 64 {
				k &= 1<<c.to - 1 // bits from to up are zero
			}
			if r.IntN(3) == 0 && i > 0 {
				k = items[i-1] // ties
			}
			items[i] = k
		}
		want := slices.Clone(items)
		keyBits := func(x uint64) uint64 { return x >> c.from }
		slices.SortStableFunc(want, func(a, b uint64) int { return cmp.Compare(keyBits(a), keyBits(b)) })
		SortBits(items, nil, c.from, c.to)
		if !slices.Equal(items, want) {
			t.Fatalf("%+v: radix order differs from a stable sort of the bits", c)
		}
	}
}
