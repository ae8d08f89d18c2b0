//go:build !(goexperiment.simd && amd64)

package textindex

// run scans data[from:to] for the needle's pair: this build has no SIMD
// package (see textscan_simd.go), so it is runSWAR.
func (s *segScan) run(from, to int) { s.runSWAR(from, to) }

// findPair reports whether an all-ASCII needle with its pair at its first
// byte occurs in seg: findPairSWAR in this build.
func (n *textNeedle) findPair(seg string) bool { return n.findPairSWAR(seg) }
