package memory

import (
	"fmt"
	"io/fs"
	"math"
	"strconv"
	"strings"
)

// A memory limit for the Go runtime: an operator sizes a
// container, and the edge must live within it. The runtime's soft limit
// (GOMEMLIMIT) makes the collector work harder as the heap nears it,
// instead of the kernel ending the process. The edge sets it, unless
// GOMEMLIMIT is set already, from --memory-limit or else from the
// memory limit of its cgroup (v2, then v1), less what lives outside the
// Go heap: a tenth for stacks, the runtime and the kernel's buffers, and
// the answer cache's copies of large answers in memfds (at most the
// cache's size).

// Limit returns the Go heap's soft limit and where it came from, or
// 0 when there is none to set. flag is --memory-limit ("" or "auto": the
// cgroup's; "off": none; else a size such as 12GiB); cgroupFS is the
// root of the cgroup file system (/sys/fs/cgroup) and selfCgroup the
// content of /proc/self/cgroup; cacheBytes is the answer cache's size.
func Limit(flag string, cgroupFS fs.FS, selfCgroup string, cacheBytes int64) (limit int64, source string, err error) {
	var total int64
	switch flag = strings.TrimSpace(flag); strings.ToLower(flag) {
	case "off":
		return 0, "off", nil
	case "", "auto":
		total, source = cgroupLimit(cgroupFS, selfCgroup)
		if total == 0 {
			return 0, "none (no cgroup memory limit)", nil
		}
	default:
		if total, err = parseSize(flag); err != nil {
			return 0, "", fmt.Errorf("--memory-limit %q: %w", flag, err)
		}
		source = "--memory-limit"
	}
	limit = total - total/10 - cacheBytes
	if limit < total/4 {
		return 0, "", fmt.Errorf("memory limit %s from %s: the answer cache (%s) leaves under a quarter of it for the heap; lower --cache-mb or raise the limit",
			sizeText(total), source, sizeText(cacheBytes))
	}
	return limit, source, nil
}

// cgroupLimit reads the memory limit of this process's cgroup: v2's
// memory.max (in the cgroup named by /proc/self/cgroup, or at the root as
// a container sees it), else v1's memory.limit_in_bytes; 0 when unlimited
// or unknown.
func cgroupLimit(root fs.FS, selfCgroup string) (int64, string) {
	var paths []string
	for line := range strings.SplitSeq(selfCgroup, "\n") {
		if p, ok := strings.CutPrefix(strings.TrimSpace(line), "0::/"); ok && p != "" {
			paths = append(paths, strings.TrimSuffix(p, "/")+"/memory.max")
		}
	}
	paths = append(paths, "memory.max", "memory/memory.limit_in_bytes")
	for _, p := range paths {
		b, err := fs.ReadFile(root, p)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		n, err := strconv.ParseInt(v, 10, 64)
		if v == "max" || err != nil || n <= 0 || n >= math.MaxInt64/2 {
			return 0, "" // unlimited (v1 writes a huge number)
		}
		return n, "cgroup " + p
	}
	return 0, ""
}

// parseSize reads a size: a whole number of bytes, or one with a unit
// (KiB, MiB, GiB, TiB; KB, MB, GB, TB are taken as the same powers of 2).
func parseSize(s string) (int64, error) {
	s = strings.TrimSpace(s)
	i := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	num, unit := s, ""
	if i >= 0 {
		num, unit = s[:i], strings.ToLower(strings.TrimSpace(s[i:]))
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("not a size such as 12GiB or 800MiB")
	}
	shift := map[string]uint{"": 0, "b": 0, "k": 10, "kb": 10, "kib": 10, "m": 20, "mb": 20, "mib": 20, "g": 30, "gb": 30, "gib": 30, "t": 40, "tb": 40, "tib": 40}
	sh, ok := shift[unit]
	if !ok {
		return 0, fmt.Errorf("unit %q: use KiB, MiB, GiB or TiB", unit)
	}
	if n > math.MaxInt64>>sh {
		return 0, fmt.Errorf("too large")
	}
	return n << sh, nil
}

// sizeText writes bytes in MiB.
func sizeText(n int64) string { return strconv.FormatInt(n>>20, 10) + " MiB" }
