package memory

import (
	"math"
	"runtime"
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

// TestKeepPercent checks the GOGC whose goal keeps room past the live
// heap: at least the operator's, at most maxKeepPercent.
func TestKeepPercent(t *testing.T) {
	const gib = int64(1) << 30
	for _, c := range []struct {
		name        string
		base        int
		live, extra int64
		want        int
	}{
		{"room past the heap", 25, 4 * gib, 5 * gib, 125},
		{"a room not a whole percent of the heap", 25, 3 * gib, 4 * gib, 134},
		{"less room than the operator's GOGC gives", 25, 4 * gib, gib / 2, 25},
		{"a heap much smaller than the room", 25, 1 << 20, gib, maxKeepPercent},
		{"a room of twice the heap", 25, 2 * gib, 4 * gib, 200},
		{"no heap read", 10, 0, gib, 10},
	} {
		if got := keepPercent(c.base, c.live, c.extra); got != c.want {
			t.Errorf("%s: GOGC %d, want %d", c.name, got, c.want)
		}
	}
}

// heapGoal reads the collector's goal for the heap.
func heapGoal() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/goal:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64())
}

// TestKeepRoom checks KeepRoom on the process's collector: its goal
// after lies the room past the live heap and what the caller holds
// next; GOGC is never lowered below the operator's, a GOGC set since
// (a test's, an operator's) is the new floor, one set while a hold is
// open is what its restore puts back, and GOGC=off stays off.
func TestKeepRoom(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(math.MaxInt64))
	state := make([]byte, 128<<20) // a live state
	const room = 160 << 20
	KeepRoom(room, 0)
	live, _ := HeapNow()
	if goal := heapGoal(); goal < live+room {
		t.Errorf("goal %d MiB after KeepRoom(%d MiB) over a live heap of %d MiB", goal>>20, room>>20, live>>20)
	}
	if p := gogc(); p <= 25 {
		t.Errorf("GOGC %d after keeping %d MiB past %d MiB", p, room>>20, live>>20)
	}
	KeepRoom(room/2, room/2) // half of it held by the caller next: the same goal, over both
	live, _ = HeapNow()
	if goal := heapGoal(); goal < live+room {
		t.Errorf("goal %d MiB keeping %d MiB with half of it made ahead, past %d MiB", goal>>20, room>>20, live>>20)
	}
	KeepRoom(0, 0) // no room to keep: the operator's GOGC back
	if p := debug.SetGCPercent(50); p != 25 {
		t.Errorf("GOGC %d keeping no room, want the operator's 25", p)
	}
	KeepRoom(0, 0) // the 50 set since is the floor now
	if p := gogc(); p != 50 {
		t.Errorf("GOGC %d after a GOGC of 50 was set, want 50", p)
	}
	end := HoldGC(1 << 20)
	KeepRoom(room, 0)
	if p := gogc(); p != -1 {
		t.Errorf("GOGC %d while a hold is open, want off", p)
	}
	end()
	if p := gogc(); p <= 50 {
		t.Errorf("GOGC %d after the hold ended, want the room's", p)
	}
	// GOGC=off: the memory limit alone.
	debug.SetGCPercent(-1)
	KeepRoom(room, 0)
	if p := gogc(); p != -1 {
		t.Errorf("an operator's GOGC=off became %d", p)
	}
	runtime.KeepAlive(state)
}
