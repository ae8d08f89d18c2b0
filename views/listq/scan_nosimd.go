//go:build !(goexperiment.simd && amd64)

package listq

import "github.com/edge-stats/edge/views"

// flagWord returns the bits of the 64 listings from base whose flag word
// w has w&mask == want: this build has no SIMD package (see
// scan_simd.go), so it is flagWordScalar.
func flagWord(meta []uint16, base int, mask, want uint16) uint64 {
	return flagWordScalar(meta, base, mask, want)
}

// rangeKernelSIMD is nil in a build without the SIMD package: rangeKernel
// runs its scalar kernel.
func rangeKernelSIMD[T int64 | int16 | uint32 | views.Day](col []T, lo, hi T, scalar kernel) kernel {
	return nil
}
