//go:build goexperiment.simd && amd64

package listq

import (
	"math/bits"
	"simd/archsimd"
	"unsafe"

	"github.com/edge-stats/edge/views"
)

// hasAVX2 reports whether the processor runs the AVX2 kernels below.
// They use AVX2's instructions and no later ones: a processor with AVX2
// and without AVX-512 (as many virtual machines' are) runs them. Of the
// masks' ToBits, those of 8-, 32- and 64-bit lanes are AVX2's
// (VPMOVMSKB, VMOVMSKPS, VMOVMSKPD); that of 16-bit lanes is AVX-512's
// (KMOVW), so 16-bit lanes go through bytes16.
var hasAVX2 = archsimd.X86.AVX2()

// bytes16 returns the bits of m's bytes (VPMOVMSKB): two bits a lane,
// both set or both clear. evenBits keeps one of each.
func bytes16(m archsimd.Mask16x16) uint64 {
	return uint64(archsimd.Int8x32{}.Greater(m.ToInt16x16().AsInt8x32()).ToBits())
}

// evenBits returns bits 0, 2, 4, ... 62 of x as bits 0 to 31.
func evenBits(x uint64) uint64 {
	x &= 0x5555555555555555
	x = (x | x>>1) & 0x3333333333333333
	x = (x | x>>2) & 0x0f0f0f0f0f0f0f0f
	x = (x | x>>4) & 0x00ff00ff00ff00ff
	x = (x | x>>8) & 0x0000ffff0000ffff
	return (x | x>>16) & 0x00000000ffffffff
}

// flagWord returns the bits of the 64 listings from base (all of them
// within meta) whose flag word w has w&mask == want, 16 at a time.
func flagWord(meta []uint16, base int, mask, want uint16) uint64 {
	if !hasAVX2 {
		return flagWordScalar(meta, base, mask, want)
	}
	m, w := archsimd.BroadcastUint16x16(mask), archsimd.BroadcastUint16x16(want)
	s := meta[base : base+64]
	b0 := bytes16(archsimd.LoadUint16x16Slice(s[0:16]).And(m).Equal(w))
	b1 := bytes16(archsimd.LoadUint16x16Slice(s[16:32]).And(m).Equal(w))
	b2 := bytes16(archsimd.LoadUint16x16Slice(s[32:48]).And(m).Equal(w))
	b3 := bytes16(archsimd.LoadUint16x16Slice(s[48:64]).And(m).Equal(w))
	return evenBits(b0|b1<<32) | evenBits(b2|b3<<32)<<32
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
		out16 := func(v archsimd.Int16x16) uint64 { return bytes16(l.Greater(v).Or(v.Greater(h))) }
		word = func(base int) uint64 {
			s := c[base : base+64]
			w0 := out16(archsimd.LoadInt16x16Slice(s[0:16])) | out16(archsimd.LoadInt16x16Slice(s[16:32]))<<32
			w1 := out16(archsimd.LoadInt16x16Slice(s[32:48])) | out16(archsimd.LoadInt16x16Slice(s[48:64]))<<32
			return evenBits(w0) | evenBits(w1)<<32
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
