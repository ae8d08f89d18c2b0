//go:build goexperiment.simd && amd64

package textindex

import (
	"math/bits"
	"simd/archsimd"
	"unsafe"
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

// findPair reports whether an all-ASCII needle with its pair at its first
// byte occurs in seg: the pair's bytes are tested 32 offsets at a time
// with AVX2 (findPairSWAR without it), and each offset where both match is
// verified.
func (n *textNeedle) findPair(seg string) bool {
	if !archsimd.X86.AVX2() {
		return n.findPairSWAR(seg)
	}
	data := unsafe.Slice(unsafe.StringData(seg), len(seg))
	d, size := n.p1, len(n.lower)
	v0, w0 := archsimd.BroadcastUint8x32(n.v0), archsimd.BroadcastUint8x32(n.w0)
	v1, w1 := archsimd.BroadcastUint8x32(n.v1), archsimd.BroadcastUint8x32(n.w1)
	at := 0
	for ; at+d+32 <= len(data); at += 32 {
		x := archsimd.LoadUint8x32Slice(data[at:])
		y := archsimd.LoadUint8x32Slice(data[at+d:])
		found := x.Equal(v0).Or(x.Equal(w0)).And(y.Equal(v1).Or(y.Equal(w1))).ToBits()
		for found != 0 {
			p := at + bits.TrailingZeros32(found)
			found &= found - 1
			if p+size <= len(seg) && n.matchesAt(seg, p) {
				return true
			}
		}
	}
	return n.matchesFrom(seg, at)
}
