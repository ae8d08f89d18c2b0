package limits

import (
	"hash/maphash"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestWindowsAdmitExactlyTheLimitConcurrently(t *testing.T) {
	w := NewWindows(30, time.Minute, HashString)
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 200 {
		wg.Go(func() {
			if ok, _ := w.Allow("k", now); ok {
				admitted.Add(1)
			}
		})
	}
	wg.Wait()
	if admitted.Load() != 30 {
		t.Fatalf("admitted %d of 200, want exactly 30", admitted.Load())
	}
}

func TestWindowsSlideAndNeverShorten(t *testing.T) {
	w := NewWindows(3, time.Minute, hashInt)
	t0 := time.Date(2026, 11, 22, 10, 0, 0, 900_000_000, time.UTC) // late in a second: the worst case
	for i := range 3 {
		if ok, _ := w.Allow(1, t0.Add(time.Duration(i)*time.Millisecond)); !ok {
			t.Fatalf("call %d refused", i)
		}
	}
	ok, wait := w.Allow(1, t0.Add(time.Second))
	if ok || wait <= 58*time.Second || wait > 61*time.Second {
		t.Fatalf("4th call: ok=%v wait=%v, want a refusal for about a minute", ok, wait)
	}
	// Exactly a minute after the first call the window still holds it
	// (events count for at least the span).
	if ok, _ := w.Allow(1, t0.Add(time.Minute)); ok {
		t.Fatal("a call a minute after the first was admitted before the first left the window")
	}
	if ok, _ := w.Allow(1, t0.Add(time.Minute+1100*time.Millisecond)); !ok {
		t.Fatal("a call 61 s after the first was refused")
	}
	// Other keys are independent.
	if ok, _ := w.Allow(2, t0); !ok {
		t.Fatal("another key was refused")
	}
}

func TestWindowsFullAndAdd(t *testing.T) {
	w := NewWindows(2, time.Minute, HashString)
	now := time.Now()
	if full, _ := w.Full("a", now); full {
		t.Fatal("empty window full")
	}
	w.Add("a", now)
	w.Add("a", now)
	if full, wait := w.Full("a", now); !full || wait <= 0 {
		t.Fatalf("full=%v wait=%v after 2 of 2", full, wait)
	}
	w.Add("a", now) // Add records past the limit
	if full, _ := w.Full("a", now.Add(2*time.Minute)); full {
		t.Fatal("window still full two minutes later")
	}
	zero := NewWindows(0, time.Minute, HashString)
	if ok, _ := zero.Allow("a", now); ok {
		t.Fatal("a zero limit admitted a call")
	}
}

func TestWindowsForgetIdleKeys(t *testing.T) {
	w := NewWindows(1, time.Minute, hashInt)
	now := time.Now()
	for i := range 1000 {
		w.Allow(i, now)
	}
	// New keys after three idle minutes reach every shard, and each sweeps
	// its own: not one of the idle keys may stay.
	later := now.Add(3 * time.Minute)
	for i := range 1000 {
		w.Allow(-1-i, later)
	}
	for i := range w.shards {
		if len(w.shards[i].m) == 0 {
			t.Fatalf("shard %d got no new key; the test does not reach every shard", i)
		}
		for k := range w.shards[i].m {
			if k >= 0 {
				t.Fatalf("idle key %d kept in shard %d after its shard was swept", k, i)
			}
		}
	}
	if n := w.keys.Load(); n != 1000 {
		t.Fatalf("%d keys counted; want the 1000 new ones", n)
	}
}

func TestPoolBoundsConcurrencyAndRate(t *testing.T) {
	p := NewPool(2, 0)
	r1, ok1 := p.TryAcquire()
	_, ok2 := p.TryAcquire()
	if _, ok3 := p.TryAcquire(); !ok1 || !ok2 || ok3 {
		t.Fatalf("slots: %v %v %v, want two taken and the third refused", ok1, ok2, ok3)
	}
	r1()
	if _, ok := p.TryAcquire(); !ok {
		t.Fatal("a released slot was not reusable")
	}

	slow := NewPool(10, 0.0001) // a burst of 10, then next to nothing
	for i := range 10 {
		rel, ok := slow.TryAcquire()
		if !ok {
			t.Fatalf("search %d refused within the burst", i)
		}
		rel()
	}
	if _, ok := slow.TryAcquire(); ok {
		t.Fatal("a search past the rate was admitted")
	}
}

func TestSubjectString(t *testing.T) {
	for s, want := range map[Subject]string{{Key: "edge_abcdefgh"}: "key:edge_abcdefgh", {Addr: netip.MustParseAddr("192.0.2.1")}: "addr:192.0.2.1",
		{Addr: netip.MustParseAddr("2001:db8::1")}: "addr:2001:db8::1"} {
		if s.String() != want {
			t.Errorf("%v: %q, want %q", s, s.String(), want)
		}
	}
}

func TestUntilMidnight(t *testing.T) {
	if d := UntilMidnight(time.Date(2026, 11, 22, 23, 59, 30, 0, time.UTC)); d != 30*time.Second {
		t.Fatalf("got %v", d)
	}
}

func hashInt(seed maphash.Seed, i int) uint64 { return maphash.Comparable(seed, i) }

// TestWindowsAndFairUseAreBounded: 100,000 keys through a Windows bounded
// at 640 and a FairUse bounded at 100 leave them within their bounds, and
// the key used last keeps its count.
func TestWindowsAndFairUseAreBounded(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	w := NewWindows(3, time.Minute, hashInt).Bound(640)
	f := NewFairUse(1, 2)
	f.max = 100
	for i := range 100_000 {
		w.Add(i, now)
		f.Allow(netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}), now)
	}
	if n := w.keys.Load(); n > 640 {
		t.Errorf("Windows holds %d keys, bound 640", n)
	}
	if n := f.Len(); n > 100 {
		t.Errorf("FairUse holds %d addresses, bound 100", n)
	}
	// The key just used is held, with its count.
	w.Add(-1, now)
	w.Add(-1, now)
	w.Add(-1, now)
	if full, _ := w.Full(-1, now); !full {
		t.Error("the newest key lost its count")
	}
}
