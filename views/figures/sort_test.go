package figures

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSortRankedAsComparing checks the packed radix sort of rankings
// against the comparison sort, over keys narrow and wide (to past what
// packs), ties, negative keys and items in and out of index order.
func TestSortRankedAsComparing(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keyOf := []func() int64{
		func() int64 { return rng.Int64N(10) },                // many ties
		func() int64 { return rng.Int64N(1 << 34) },           // sizes
		func() int64 { return rng.Int64N(2000) - 1000 },       // climbs, growths below 0
		func() int64 { return 0 },                             // one key
		func() int64 { return rng.Int64() - math.MaxInt64/2 }, // too wide to pack
		func() int64 { return []int64{math.MinInt64, math.MaxInt64, 0}[rng.IntN(3)] },
	}
	for round := range 300 {
		n := rng.IntN(3000)
		key, key2 := keyOf[round%len(keyOf)], keyOf[(round/len(keyOf))%len(keyOf)]
		lo := rng.Int32N(1 << 20)
		items := make([]ranked, n)
		for i := range items {
			items[i] = ranked{key: key(), key2: key2(), idx: lo + int32(i)*(1+rng.Int32N(3))}
		}
		if round%2 == 1 {
			rng.Shuffle(n, func(i, j int) { items[i], items[j] = items[j], items[i] })
		}
		want := slices.Clone(items)
		sortRankedCompare(want)
		sortRanked(items)
		if !slices.Equal(items, want) {
			for i := range items {
				if items[i] != want[i] {
					t.Fatalf("round %d (%d items): item %d is %+v, want %+v", round, n, i, items[i], want[i])
				}
			}
		}
	}
}
