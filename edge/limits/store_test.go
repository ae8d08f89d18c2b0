package limits

import (
	"context"
	"net/netip"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
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

// countingStore counts what a Store is asked to read.
type countingStore struct {
	Store
	dayReads, changes int
}

func (c *countingStore) Day(ctx context.Context, day time.Time) (DayRead, error) {
	c.dayReads++
	return c.Store.Day(ctx, day)
}

func (c *countingStore) Since(ctx context.Context, day time.Time, pos Pos) ([]analytics.UsageChange, Pos, error) {
	ch, p, err := c.Store.Since(ctx, day, pos)
	c.changes += len(ch)
	return ch, p, err
}

// TestSyncReadsOnlyWhatChanged: after an edge has read the day once, a
// sync reads the batches written since its last read, not the day's
// callers (issue 19, item 3); the day stays exact across edges, and an
// edge's own batch read back is not counted twice.
func TestSyncReadsOnlyWhatChanged(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cfg := DefaultConfig()
	cfg.Anonymous = Policy{PerMinute: 1000, PerDay: 3}
	cfg.Now = func() time.Time { return now }
	store := Memory()
	counted := &countingStore{Store: store}
	a, b := New(cfg, store), New(cfg, counted)
	ctx := context.Background()
	sync := func(l *Limiter) {
		t.Helper()
		if err := l.Usage.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	sync(a)
	sync(b)
	addr := func(i int) Subject {
		return Subject{Addr: netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})}
	}
	const day = 100_000
	for i := range day {
		if d := a.Admit(addr(i), 0, time.Time{}); d.Outcome != Admitted {
			t.Fatalf("caller %d: %v", i, d.Outcome)
		}
	}
	sync(a)
	sync(b)
	if counted.dayReads != 1 || b.Usage.Subjects() != day {
		t.Fatalf("edge b read the day %d times and holds %d callers; want 1 and %d", counted.dayReads, b.Usage.Subjects(), day)
	}
	// Ten new callers, and one of the day's using up its 3 calls.
	counted.changes = 0
	for i := range 10 {
		a.Admit(addr(day+i), 0, time.Time{})
	}
	a.Admit(addr(7), 0, time.Time{})
	a.Admit(addr(7), 0, time.Time{})
	sync(a)
	sync(b)
	if counted.changes != 11 || counted.dayReads != 1 {
		t.Fatalf("a sync after 11 changes read %d changes and the whole day %d times", counted.changes, counted.dayReads)
	}
	if d := b.Admit(addr(7), 0, time.Time{}); d.Outcome != DayFull {
		t.Fatalf("a caller whose day was used on edge a: %v on edge b", d.Outcome)
	}
	// Edge b's own calls, read back, count once.
	own := addr(day + 100)
	b.Admit(own, 0, time.Time{})
	sync(b)
	sync(b)
	if d := b.Admit(own, 0, time.Time{}); d.Outcome != Admitted || d.Remaining != 1 {
		t.Fatalf("the second of 3 calls after a sync: %v, remaining %d, want 1", d.Outcome, d.Remaining)
	}
}
