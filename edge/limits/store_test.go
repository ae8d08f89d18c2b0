package limits

import (
	"context"
	"net/netip"
	"testing"
	"time"
)

// TestTwoEdgesShareTheDayThroughAStore checks the fleet's day through the
// store: calls counted on one edge are seen by the other after both sync,
// and the day's limit holds across them.
func TestTwoEdgesShareTheDayThroughAStore(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cfg := DefaultConfig()
	cfg.Anonymous = Policy{PerMinute: 1000, PerDay: 10}
	cfg.Now = func() time.Time { return now }
	store := Memory()
	a, b := New(cfg, store), New(cfg, store)
	ctx := context.Background()
	for _, l := range []*Limiter{a, b} {
		if err := l.Usage.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := Subject{Addr: netip.MustParseAddr("192.0.2.7")}
	for i := range 6 {
		if d := a.Admit(s, 0, time.Time{}); d.Outcome != Admitted {
			t.Fatalf("call %d on edge a: %v", i+1, d.Outcome)
		}
	}
	if err := a.Usage.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Usage.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	admitted := 0
	for range 10 {
		if b.Admit(s, 0, time.Time{}).Outcome == Admitted {
			admitted++
		}
	}
	if admitted != 4 {
		t.Fatalf("edge b admitted %d calls after edge a's 6; want the 4 left of the day's 10", admitted)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := b.Usage.Sync(cancelled); err == nil {
		t.Fatal("a sync with its context ended succeeded")
	}
}
