package memory

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
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

// TestBuildGC checks the collector's settings while a full build runs:
// no GOGC, a memory goal of what the process holds plus buildBytes a
// listing (an operator's lower limit wins), and both settings restored.
func TestBuildGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))

	const n = 1_000_000
	restore := BuildGC(n)
	if p := debug.SetGCPercent(-1); p != -1 {
		t.Errorf("GOGC during the build = %d, want off", p)
	}
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	held := int64(s[0].Value.Uint64())
	if l := debug.SetMemoryLimit(-1); l < n*buildBytes || l > held+n*buildBytes {
		t.Errorf("memory goal = %d, want the %d held (less what was returned) and %d", l, held, n*buildBytes)
	}
	restore()
	if p := debug.SetGCPercent(10); p != 10 {
		t.Errorf("GOGC after = %d, want 10", p)
	}
	if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
		t.Errorf("memory limit after = %d, want none", l)
	}

	debug.SetMemoryLimit(1 << 20)
	restore = BuildGC(n)
	if l := debug.SetMemoryLimit(-1); l != 1<<20 {
		t.Errorf("an operator's limit of 1 MiB became %d", l)
	}
	restore()
	if l := debug.SetMemoryLimit(-1); l != 1<<20 {
		t.Errorf("the operator's limit after = %d", l)
	}
}

// TestOverlappingHoldsRestoreOnce checks holds of the collector that
// overlap (two edges of one process building at once) and end in either
// order: each raises the goal, and the settings before come back when
// the last ends, not before and not twice.
func TestOverlappingHoldsRestoreOnce(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	for _, firstEndsFirst := range []bool{true, false} {
		a := HoldGC(1 << 20)
		goalA := debug.SetMemoryLimit(-1)
		b := HoldGC(1 << 30)
		if goalB := debug.SetMemoryLimit(-1); goalB <= goalA {
			t.Errorf("a larger hold left the goal at %d (the first's %d)", goalB, goalA)
		}
		first, second := a, b
		if !firstEndsFirst {
			first, second = b, a
		}
		first()
		first() // a restore runs once
		if p := debug.SetGCPercent(-1); p != -1 {
			t.Errorf("GOGC %d while a hold is open, want off", p)
		}
		second()
		if p := debug.SetGCPercent(100); p != 100 {
			t.Errorf("GOGC after both = %d, want 100", p)
		}
		if l := debug.SetMemoryLimit(-1); l != math.MaxInt64 {
			t.Errorf("memory limit after both = %d, want none", l)
		}
	}
}
