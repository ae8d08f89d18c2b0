package limits

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// TestNewCallerAtTheBound: with the entries at their bound and every one
// holding calls not yet in the fleet's totals (nothing can be evicted), a
// new caller gets an answer, store up or down; it never loops (entryOf
// storing it and evict dropping it, forever). It waits for the next
// Sync: when that Sync writes the calls (store up), it is counted; when
// it cannot (store down), it is refused (Crowded, with a wait to retry).
func TestNewCallerAtTheBound(t *testing.T) {
	for _, down := range []bool{false, true} {
		now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		cfg := DefaultConfig()
		cfg.Anonymous = Policy{PerMinute: 100, PerDay: 1000}
		cfg.MaxActive = 40
		cfg.StaleAfter = time.Hour
		cfg.Now = func() time.Time { return now }
		store := &flakyStore{Store: usagelog.Memory()}
		l := New(cfg, store)
		ctx := context.Background()
		if err := l.Usage.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		addr := func(i int) Subject { return Subject{Addr: netip.AddrFrom4([4]byte{10, 1, byte(i >> 8), byte(i)})} }
		for i := range 40 {
			if d := l.Admit(addr(i), 0, time.Time{}); d.Outcome != ratelimit.Admitted {
				t.Fatalf("down %v: caller %d: %+v", down, i, d)
			}
		}
		if down {
			store.failBefore = 1 << 30
		}
		// Without a Sync, a new caller waits its while and is refused.
		if d := l.Admit(addr(40), 0, time.Time{}); d.Outcome != ratelimit.Crowded || d.RetryAfter <= 0 {
			t.Fatalf("down %v: the 41st caller: %+v, want Crowded with a wait", down, d)
		}
		// The replay path's admission never waits.
		if _, ok := l.TryAdmit(addr(41), 0, time.Time{}); ok {
			t.Fatalf("down %v: TryAdmit admitted a caller at the bound", down)
		}
		if l.Usage.Active() > 40 {
			t.Fatalf("down %v: %d entries held, bound 40", down, l.Usage.Active())
		}
		// Callers already counted go on.
		if d := l.Admit(addr(3), 0, time.Time{}); d.Outcome != ratelimit.Admitted {
			t.Fatalf("down %v: a counted caller: %+v", down, d)
		}
		// New callers waiting when a Sync comes: counted when it writes
		// the calls, refused when it cannot.
		answered := make(chan ratelimit.Decision, 3)
		for i := range 3 {
			go func() { answered <- l.Admit(addr(100+i), 0, time.Time{}) }()
		}
		time.Sleep(50 * time.Millisecond) // they wait for the Sync
		err := l.Usage.Sync(ctx)
		if down != (err != nil) {
			t.Fatalf("down %v: sync: %v", down, err)
		}
		for range 3 {
			select {
			case d := <-answered:
				if want := map[bool]ratelimit.Outcome{false: ratelimit.Admitted, true: ratelimit.Crowded}[down]; d.Outcome != want {
					t.Fatalf("down %v: a caller waiting for the Sync: %+v, want %v", down, d, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatalf("down %v: a new caller got no answer: the bound loops", down)
			}
		}
		// The store back: a Sync writes the calls, and a new caller is counted.
		store.failBefore = 0
		if err := l.Usage.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if d := l.Admit(addr(300), 0, time.Time{}); d.Outcome != ratelimit.Admitted {
			t.Fatalf("down %v: a new caller after the sync: %+v", down, d)
		}
		if d := l.Admit(addr(3), 0, time.Time{}); d.Outcome != ratelimit.Admitted || d.Remaining != 1000-3 {
			t.Fatalf("down %v: caller 3 after the sync: %+v, want 997 left (its count kept)", down, d)
		}
	}
}

// TestFloodsAtTheBoundDoNotSweep: a flood of new keys at a full bound,
// all within one instant, costs each a sample, not a sweep of every key
// held (which, under the fair use's one lock, would stall every caller).
func TestFloodsAtTheBoundDoNotSweep(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	addr := func(i int) netip.Addr { return netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)}) }
	w := NewWindows(5, time.Minute, HashAddr).Bound(640)
	for i := range 20_000 {
		w.Allow(addr(i), now)
	}
	sweeps := 0
	for i := range w.shards {
		sweeps += w.shards[i].sweeps
	}
	if w.Len() > 640 || sweeps > 2*len(w.shards) {
		t.Errorf("windows: %d keys held (bound 640), %d sweeps of %d shards for 20,000 new keys in one instant", w.Len(), sweeps, len(w.shards))
	}
	f := NewFairUse(1, 5)
	f.max = 640
	for i := range 20_000 {
		f.Allow(addr(i), now)
	}
	if f.Len() > 640 || f.sweeps > 2 {
		t.Errorf("fair use: %d addresses held (bound 640), %d sweeps for 20,000 new addresses in one instant", f.Len(), f.sweeps)
	}
}
