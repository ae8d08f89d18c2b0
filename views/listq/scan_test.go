package listq

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/edge-stats/edge/views"
)

// scalarRange is the obvious range test: the bits of the listings of in
// whose value lies in [lo, hi].
func scalarRange[T int64 | int16 | uint32 | views.Day](col []T, lo, hi T, base int, in uint64) uint64 {
	var out uint64
	for b := in; b != 0; b &= b - 1 {
		k := bits.TrailingZeros64(b)
		if v := col[base+k]; v >= lo && v <= hi {
			out |= 1 << k
		}
	}
	return out
}

// checkRange runs rangeKernel (the AVX2 one in a SIMD build) over every
// word of col, dense and sparse, against scalarRange.
func checkRange[T int64 | int16 | uint32 | views.Day](t *testing.T, name string, col []T, bounds [][2]T, r *rand.Rand) {
	t.Helper()
	for _, b := range bounds {
		k := rangeKernel(col, b[0], b[1])
		for base := 0; base < len(col); base += 64 {
			for _, in := range []uint64{math.MaxUint64, r.Uint64(), r.Uint64() & r.Uint64() & r.Uint64(), 1 << r.IntN(64), 0} {
				if base+64 > len(col) {
					in &= 1<<(len(col)-base) - 1
				}
				if got, want := k(base, in), scalarRange(col, b[0], b[1], base, in); got != want {
					t.Fatalf("%s [%v, %v] at %d, in %064b:\n got %064b\nwant %064b", name, b[0], b[1], base, in, got, want)
				}
			}
		}
	}
}

// TestScanKernelsMatchScalar checks the column kernels of a scan, the flag
// word and each type's range, against plain comparisons: extreme values,
// empty and one-value ranges, and a last partial word.
func TestScanKernelsMatchScalar(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const n = 64*40 + 23
	i64, i16, u32, days := make([]int64, n), make([]int16, n), make([]uint32, n), make([]views.Day, n)
	meta := make([]uint16, n)
	for i := range n {
		i64[i] = []int64{math.MinInt64, math.MaxInt64, -1, 0, 100, 50_000, r.Int64N(100_000), int64(r.Uint64())}[r.IntN(8)]
		i16[i] = []int16{-1, 0, 500, math.MaxInt16, math.MinInt16, int16(r.IntN(501))}[r.IntN(6)]
		u32[i] = []uint32{0, 1, math.MaxUint32, math.MaxUint32 - 1, r.Uint32(), uint32(r.IntN(10))}[r.IntN(6)]
		days[i] = []views.Day{views.NoDay, 0, math.MaxInt32, math.MinInt32, views.Day(20_000 + r.IntN(400))}[r.IntN(5)]
		meta[i] = uint16(r.Uint32())
	}
	checkRange(t, "int64", i64, [][2]int64{{100, 50_000}, {0, math.MaxInt64}, {math.MinInt64, math.MaxInt64}, {-1, -1}, {math.MinInt64, -1}, {50_001, 50_000}}, r)
	checkRange(t, "int16", i16, [][2]int16{{0, math.MaxInt16}, {400, 500}, {math.MinInt16, -1}, {7, 7}}, r)
	checkRange(t, "uint32", u32, [][2]uint32{{1, math.MaxUint32}, {2, 9}, {math.MaxUint32, math.MaxUint32}, {0, 0}}, r)
	checkRange(t, "Day", days, [][2]views.Day{{20_100, math.MaxInt32}, {math.MinInt32, math.MaxInt32}, {views.NoDay, views.NoDay}, {20_000, 20_399}}, r)
	for _, mw := range [][2]uint16{{metaCrawled, metaCrawled}, {0xffff, meta[5]}, {metaCrawled | metaDelisted | 7, metaCrawled | 4}, {0, 0}} {
		for base := 0; base+64 <= n; base += 64 {
			if got, want := flagWord(meta, base, mw[0], mw[1]), flagWordScalar(meta, base, mw[0], mw[1]); got != want {
				t.Fatalf("flag word %04x/%04x at %d: got %064b, want %064b", mw[0], mw[1], base, got, want)
			}
			var want uint64
			for k := range 64 {
				if meta[base+k]&mw[0] == mw[1] {
					want |= 1 << k
				}
			}
			if got := flagWordScalar(meta, base, mw[0], mw[1]); got != want {
				t.Fatalf("scalar flag word %04x/%04x at %d: got %064b, want %064b", mw[0], mw[1], base, got, want)
			}
		}
	}
}
