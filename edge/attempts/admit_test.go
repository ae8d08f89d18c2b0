package attempts

import (
	"context"
	"encoding/hex"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Admit decides in the store: a burst at one edge admits exactly the
// limit; bursts at several edges at once (no leader to ask) admit no
// more than the limit together, since each decision is written before it
// is admitted and read back with every edge's; an edge started after
// (a leader killed, a new one elected) counts every admission made
// before, though nothing was ever synced; a refused attempt is revoked
// and stops counting; and a store out of reach decides nothing.
func TestAdmitHoldsTheLimitAcrossEdges(t *testing.T) {
	ctx := context.Background()
	const limit = 5
	cases := []struct {
		name         string
		edges, burst int
		exact        bool // a burst at one edge admits exactly the limit
	}{
		{"one edge", 1, 12, true},
		{"three edges at once", 3, 12, false},
		{"four edges, many at once", 4, 40, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			store := Memory()
			logs := make([]*Log, c.edges)
			for i := range logs {
				logs[i], _ = newLog(store)
			}
			key := Subject("signup", "192.0.2.1")
			var admitted, refused atomic.Int64
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range c.burst {
				wg.Go(func() {
					<-start
					ok, wait, err := logs[i%len(logs)].Admit(ctx, SignUp, key, limit, time.Hour)
					switch {
					case err != nil:
						t.Error(err)
					case ok:
						admitted.Add(1)
					case wait < time.Second || wait > time.Hour:
						t.Errorf("a refusal says to retry in %v", wait)
					default:
						refused.Add(1)
					}
				})
			}
			close(start)
			wg.Wait()
			if n := admitted.Load(); n > limit || c.exact && n != limit || n == 0 {
				t.Errorf("%d attempts over %d edges: %d admitted, want ≤ %d (exactly at one edge), and some", c.burst, c.edges, n, limit)
			}
			if admitted.Load()+refused.Load() != int64(c.burst) {
				t.Errorf("admitted %d + refused %d ≠ %d", admitted.Load(), refused.Load(), c.burst)
			}
			// A new edge (the next leader) counts them all, nothing synced.
			next, _ := newLog(store)
			live, err := next.live(ctx, SignUp, hex.EncodeToString(key[:]), time.Now().Add(-time.Hour))
			if err != nil || int64(len(live)) != admitted.Load() {
				t.Errorf("a new edge counts %d live attempts (%v), want the %d admitted", len(live), err, admitted.Load())
			}
			for range limit {
				if ok, _, err := next.Admit(ctx, SignUp, key, limit, time.Hour); err != nil || ok && admitted.Add(1) > limit {
					t.Errorf("a new edge admitted past the limit (%v)", err)
				}
			}
			// Another subject is not touched.
			if ok, _, err := next.Admit(ctx, SignUp, Subject("signup", "192.0.2.2"), limit, time.Hour); !ok || err != nil {
				t.Errorf("another address: %v %v", ok, err)
			}
		})
	}

	// Out of reach: no decision, no admission.
	store := Memory()
	l, _ := newLog(store)
	store.Fail.Store(true)
	if ok, _, err := l.Admit(ctx, SignUp, Subject("x"), limit, time.Hour); ok || err == nil {
		t.Errorf("a store out of reach: admitted %v, err %v", ok, err)
	}
}

// The span moves: attempts older than it stop counting, and a refusal
// names when the oldest that counts leaves it.
func TestAdmitRetriesWhenTheOldestLeaves(t *testing.T) {
	ctx := context.Background()
	store := Memory()
	l, _ := newLog(store)
	now := time.Now()
	l.now = func() time.Time { return now }
	key := Subject("k")
	for i := range 2 {
		if ok, _, err := l.Admit(ctx, SignUp, key, 2, time.Hour); !ok || err != nil {
			t.Fatalf("attempt %d: %v %v", i, ok, err)
		}
		now = now.Add(10 * time.Minute)
	}
	ok, wait, err := l.Admit(ctx, SignUp, key, 2, time.Hour)
	if ok || err != nil || wait < 39*time.Minute || wait > 41*time.Minute {
		t.Errorf("past the limit: %v %v %v, want a refusal for 40 minutes", ok, wait, err)
	}
	now = now.Add(41 * time.Minute)
	if ok, _, err := l.Admit(ctx, SignUp, key, 2, time.Hour); !ok || err != nil {
		t.Errorf("once the oldest left the span: %v %v", ok, err)
	}
}
