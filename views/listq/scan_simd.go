//go:build goexperiment.simd && amd64

package listq

import (
	"math/bits"
	"simd/archsimd"
	"unsafe"

	"github.com/edge-stats/edge/views"
)

// hasAVX2 reports whether the processor runs the AVX2 kernels below.
var hasAVX2 = archsimd.X86.AVX2()

// flagWord returns the bits of the 64 listings from base (all of them
// within meta) whose flag word w has w&mask == want, 16 at a time.
func flagWord(meta []uint16, base int, mask, want uint16) uint64 {
	if !hasAVX2 {
		return flagWordScalar(meta, base, mask, want)
	}
	m, w := archsimd.BroadcastUint16x16(mask), archsimd.BroadcastUint16x16(want)
	s := meta[base : base+64]
	b0 := archsimd.LoadUint16x16Slice(s[0:16]).And(m).Equal(w).ToBits()
	b1 := archsimd.LoadUint16x16Slice(s[16:32]).And(m).Equal(w).ToBits()
	b2 := archsimd.LoadUint16x16Slice(s[32:48]).And(m).Equal(w).ToBits()
	b3 := archsimd.LoadUint16x16Slice(s[48:64]).And(m).Equal(w).ToBits()
	return uint64(b0) | uint64(b1)<<16 | uint64(b2)<<32 | uint64(b3)<<48
}

// rangeKernelSIMD returns rangeKernel's kernel for col, lo and hi
// (lo ≤ hi) that compares a word's 64 values 4 to 16 at a time when
// most of them are left, with scalar for the few-left words and a
// store's last, partial word; nil without AVX2.
func rangeKernelSIMD[T int64 | int16 | uint32 | views.Day](col []T, lo, hi T, scalar kernel) kernel {
	if !hasAVX2 {
		return nil
	}
	var word func(base int) uint64 // the bits of the values out of range
	switch c := any(col).(type) {
	case []int64:
		l, h := archsimd.BroadcastInt64x4(int64(lo)), archsimd.BroadcastInt64x4(int64(hi))
		word = func(base int) uint64 {
			s := c[base : base+64]
			var out uint64
			for q := 0; q < 64; q += 4 {
				v := archsimd.LoadInt64x4Slice(s[q : q+4])
				out |= uint64(l.Greater(v).Or(v.Greater(h)).ToBits()) << q
			}
			return out
		}
	case []int16:
		l, h := archsimd.BroadcastInt16x16(int16(lo)), archsimd.BroadcastInt16x16(int16(hi))
		word = func(base int) uint64 {
			s := c[base : base+64]
			var out uint64
			for q := 0; q < 64; q += 16 {
				v := archsimd.LoadInt16x16Slice(s[q : q+16])
				out |= uint64(l.Greater(v).Or(v.Greater(h)).ToBits()) << q
			}
			return out
		}
	case []uint32:
		l, h := archsimd.BroadcastUint32x8(uint32(lo)), archsimd.BroadcastUint32x8(uint32(hi))
		word = func(base int) uint64 {
			s := c[base : base+64]
			var out uint64
			for q := 0; q < 64; q += 8 {
				v := archsimd.LoadUint32x8Slice(s[q : q+8])
				out |= uint64(l.Greater(v).Or(v.Greater(h)).ToBits()) << q
			}
			return out
		}
	case []views.Day:
		days := unsafe.Slice((*int32)(unsafe.SliceData(c)), len(c)) // views.Day is an int32
		l, h := archsimd.BroadcastInt32x8(int32(lo)), archsimd.BroadcastInt32x8(int32(hi))
		word = func(base int) uint64 {
			s := days[base : base+64]
			var out uint64
			for q := 0; q < 64; q += 8 {
				v := archsimd.LoadInt32x8Slice(s[q : q+8])
				out |= uint64(l.Greater(v).Or(v.Greater(h)).ToBits()) << q
			}
			return out
		}
	default:
		return nil
	}
	n := len(col)
	return func(base int, in uint64) uint64 {
		if base+64 > n || bits.OnesCount64(in) < denseMin {
			return scalar(base, in)
		}
		return in &^ word(base)
	}
}
