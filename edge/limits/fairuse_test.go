package limits

import (
	"net/netip"
	"testing"
	"time"
)

// TestFairUse checks the burst, the refill, the wait it reports, that a
// refused request takes no token, and that refilled addresses are
// forgotten.
func TestFairUse(t *testing.T) {
	f := NewFairUse(2, 3) // 2 a second, bursts of 3
	a, b := netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range 3 {
		if ok, _ := f.Allow(a, now); !ok {
			t.Fatalf("request %d of the burst refused", i+1)
		}
	}
	ok, wait := f.Allow(a, now)
	if ok || wait <= 0 || wait > 500*time.Millisecond {
		t.Fatalf("past the burst: %v, wait %v; want refused with a wait of at most 0.5 s", ok, wait)
	}
	for range 10 { // refused requests take nothing: the wait stays the same
		if _, w := f.Allow(a, now); w != wait {
			t.Fatalf("a refused request changed the wait from %v to %v", wait, w)
		}
	}
	if ok, _ := f.Allow(b, now); !ok {
		t.Fatal("another address shares the first one's bucket")
	}
	if ok, _ := f.Allow(a, now.Add(wait)); !ok {
		t.Fatal("refused after the wait it gave")
	}
	f.Allow(a, now.Add(2*time.Minute)) // sweeps: b has refilled
	if n := f.Len(); n != 1 {
		t.Fatalf("%d buckets after the sweep; want only the address just seen", n)
	}
	off := NewFairUse(0, 1)
	for range 100 {
		if ok, _ := off.Allow(a, now); !ok {
			t.Fatal("rate 0 refused a request")
		}
	}
}
