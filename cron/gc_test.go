package cron

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestGrowGC checks the collector's settings while a bare replica loads:
// no GOGC, a memory goal by the listings (an operator's lower limit
// wins), and both settings restored afterwards.
func TestGrowGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	restore := GrowGC(1_000_000)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GOGC during the load = %d, want off", p)
	}
	if l, want := debug.SetMemoryLimit(-1), int64(1_000_000*bareLoadBytes+256<<20); l != want {
		t.Errorf("memory goal = %d, want %d", l, want)
	}
	restore()
	if p := debug.SetGCPercent(25); p != 25 {
		t.Errorf("GOGC after = %d, want 25", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit after = %d, want none", l)
	}

	debug.SetMemoryLimit(1 << 30)
	restore = GrowGC(10_000_000)
	if l := debug.SetMemoryLimit(-1); l != 1<<30 {
		t.Errorf("an operator's limit of 1 GiB became %d", l)
	}
	restore()
	if l := debug.SetMemoryLimit(-1); l != 1<<30 {
		t.Errorf("the operator's limit after = %d", l)
	}
}
