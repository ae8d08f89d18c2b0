package textindex

import (
	"encoding/binary"
	"math/bits"
)

const (
	lowBytes  = 0x0101010101010101
	highBytes = 0x8080808080808080
)

// either reports whether byte h is v or w: the scan's test of one byte
// against one byte of the pair.
func either(h, v, w byte) bool { return h == v || h == w }

// zeroBytes has the high bit set in each zero byte of x, and possibly in
// bytes above a zero byte (borrows): candidates are verified.
func zeroBytes(x uint64) uint64 { return (x - lowBytes) &^ x & highBytes }

// runSWAR scans data[from:to] for the needle's pair eight positions at a
// time, in plain Go (SIMD within a register), calling candidate for each.
func (s *segScan) runSWAR(from, to int) {
	data, n := s.a.data, s.n
	d := n.p1 - n.p0
	v0, w0 := uint64(n.v0)*lowBytes, uint64(n.w0)*lowBytes
	v1, w1 := uint64(n.v1)*lowBytes, uint64(n.w1)*lowBytes
	pos := from
	for pos+d+8 <= to {
		x := binary.LittleEndian.Uint64(data[pos:])
		y := binary.LittleEndian.Uint64(data[pos+d:])
		found := (zeroBytes(x^v0) | zeroBytes(x^w0)) & (zeroBytes(y^v1) | zeroBytes(y^w1))
		next := pos + 8
		for found != 0 {
			p := pos + bits.TrailingZeros64(found)>>3
			found &= found - 1
			if !either(data[p], n.v0, n.w0) || !either(data[p+d], n.v1, n.w1) {
				continue
			}
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

// runScalar scans data[from:to] a byte at a time: the tail of the vector
// scans.
func (s *segScan) runScalar(from, to int) {
	data, n := s.a.data, s.n
	d := n.p1 - n.p0
	for pos := from; pos+d < to; pos++ {
		if either(data[pos], n.v0, n.w0) && either(data[pos+d], n.v1, n.w1) {
			r := s.candidate(pos)
			if r < 0 {
				return
			}
			pos = r - 1
		}
	}
}
