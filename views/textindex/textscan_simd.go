//go:build goexperiment.simd && amd64

package textindex

import (
	"math/bits"
	"simd/archsimd"
)

// run scans data[from:to] for the needle's pair 32 positions at a time
// with AVX2, or with runSWAR on a processor without it.
func (s *segScan) run(from, to int) {
	if !archsimd.X86.AVX2() {
		s.runSWAR(from, to)
		return
	}
	data, n := s.a.data, s.n
	d := n.p1 - n.p0
	v0, w0 := archsimd.BroadcastUint8x32(n.v0), archsimd.BroadcastUint8x32(n.w0)
	v1, w1 := archsimd.BroadcastUint8x32(n.v1), archsimd.BroadcastUint8x32(n.w1)
	pos := from
	for pos+d+32 <= to {
		x := archsimd.LoadUint8x32Slice(data[pos:])
		y := archsimd.LoadUint8x32Slice(data[pos+d:])
		found := x.Equal(v0).Or(x.Equal(w0)).And(y.Equal(v1).Or(y.Equal(w1))).ToBits()
		next := pos + 32
		for found != 0 {
			p := pos + bits.TrailingZeros32(found)
			found &= found - 1
			r := s.candidate(p)
			if r < 0 {
				return
			}
			if r > p+1 {
				next = r
				break
			}
		}
		pos = next
	}
	s.runScalar(pos, to)
}
