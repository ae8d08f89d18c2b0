package views

import "strconv"

// CompareVersions compares two version strings by their leading dotted
// numbers, component by component, so that 2.10 is above 2.9. Missing
// trailing components count as zero (1.0 equals 1.0.0); anything after
// the leading numbers (as in 1.2-beta) is ignored. ok is false when either
// version does not start with a digit.
func CompareVersions(a, b string) (c int, ok bool) {
	pa, oka := versionParts(a)
	pb, okb := versionParts(b)
	if !oka || !okb {
		return 0, false
	}
	for i := 0; i < max(len(pa), len(pb)); i++ {
		var x, y uint64
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		if x != y {
			if x < y {
				return -1, true
			}
			return 1, true
		}
	}
	return 0, true
}

// versionParts returns the leading dotted numbers of v.
func versionParts(v string) ([]uint64, bool) {
	if !VersionComparable(v) {
		return nil, false
	}
	var parts []uint64
	start := 0
	for i := 0; i <= len(v); i++ {
		if i < len(v) && v[i] >= '0' && v[i] <= '9' {
			continue
		}
		if i == start {
			break
		}
		n, err := strconv.ParseUint(v[start:i], 10, 64)
		if err != nil {
			n = 1<<64 - 1
		}
		parts = append(parts, n)
		if i == len(v) || v[i] != '.' {
			break
		}
		start = i + 1
	}
	return parts, true
}

// VersionComparable reports whether a version string starts with a number,
// so that it can be compared as a version.
func VersionComparable(v string) bool { return v != "" && v[0] >= '0' && v[0] <= '9' }
