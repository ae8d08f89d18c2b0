package exchange

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/edge-stats/edge/views/replica"
)

func TestPlaceOrder(t *testing.T) {
	h := place{epoch: 5, gen: 17}
	for _, c := range []struct {
		epoch  int64
		gen    uint64
		before bool
	}{
		{5, 16, true}, {4, 99, true}, {5, 17, false}, {5, 18, false}, {6, 1, false}, {0, 1, false},
	} {
		if got := h.before(c.epoch, c.gen); got != c.before {
			t.Errorf("(%d, %d) before (5, 17): %v, want %v", c.epoch, c.gen, got, c.before)
		}
	}
	if (place{}).before(1, 1) {
		t.Error("nothing held yet, and a state comes before it")
	}
}

// TestFollowerRefusesAnOlderState: a follower that took
// generation 17 from the leader of epoch 5 refuses a state of generation
// 12 from the same leader (a replay, or an edge of the fleet that is not
// the elected one serving what it held), whole or as a delta, and counts
// it; the same state from a later leader (epoch 6) is taken.
func TestFollowerRefusesAnOlderState(t *testing.T) {
	keys := keysOf(t, testToken)
	l := startLeader(t, withKeys(DefaultConfig(), keys))
	var epoch atomic.Int64
	epoch.Store(5)
	cfg := withKeys(DefaultConfig(), keys)
	cfg.LeaderEpoch = func(addr string) int64 {
		if addr != l.url {
			t.Errorf("the epoch asked of %q, the leader is at %q", addr, l.url)
		}
		return epoch.Load()
	}
	f := follower(t, cfg, l.url, false)
	ctx := context.Background()

	l.offer(t, synth(2000, 17), 100)
	got, _, tag, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 1})
	if err != nil || got == nil {
		t.Fatalf("generation 17: %v", err)
	}
	l.offer(t, synth(1999, 12), 101)
	if r, _, _, err := f.Fetch(ctx, tag, replica.ReadOptions{Generation: 2, Prev: got}); err == nil || r != nil {
		t.Fatalf("generation 12 after 17 from the same leader: taken (%v)", err)
	}
	if r, _, _, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 2}); err == nil || r != nil {
		t.Fatalf("generation 12 after 17 from the same leader, whole: taken (%v)", err)
	}
	if n := cfg.Metrics.Refused("older"); n < 2 {
		t.Errorf("%v refusals counted as older, want 2", n)
	}
	epoch.Store(6) // a later leader's: its generations count afresh
	if r, _, _, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 2}); err != nil || r == nil || r.Len() != 1999 {
		t.Fatalf("the state of a later leader: %v", err)
	}
}
