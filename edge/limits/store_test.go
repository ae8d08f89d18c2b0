package limits

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// TestTwoEdgesShareTheDayThroughAStore checks the fleet's day through the
// store: calls counted on one edge are seen by the other after both sync,
// and the day's limit holds across them.
func TestTwoEdgesShareTheDayThroughAStore(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cfg := DefaultConfig()
	cfg.Anonymous = Policy{PerMinute: 1000, PerDay: 10}
	cfg.Now = func() time.Time { return now }
	store := usagelog.Memory()
	a, b := New(cfg, store), New(cfg, store)
	ctx := context.Background()
	for _, l := range []*Limiter{a, b} {
		if err := l.Usage.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	s := Subject{Addr: netip.MustParseAddr("192.0.2.7")}
	for i := range 6 {
		if d := a.Admit(s, 0, time.Time{}); d.Outcome != ratelimit.Admitted {
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
		if b.Admit(s, 0, time.Time{}).Outcome == ratelimit.Admitted {
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
	usagelog.Store
	dayReads, changes int
}

func (c *countingStore) Day(ctx context.Context, day time.Time) (usagelog.DayRead, error) {
	c.dayReads++
	return c.Store.Day(ctx, day)
}

func (c *countingStore) Since(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, usagelog.Pos, error) {
	ch, p, err := c.Store.Since(ctx, day, pos)
	c.changes += len(ch)
	return ch, p, err
}

// TestSyncReadsOnlyWhatChanged: after an edge has read the day once, a
// sync reads the batches written since its last read, not the day's
// callers; the day stays exact across edges, and an
// edge's own batch read back is not counted twice.
func TestSyncReadsOnlyWhatChanged(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cfg := DefaultConfig()
	cfg.Anonymous = Policy{PerMinute: 1000, PerDay: 3}
	cfg.Now = func() time.Time { return now }
	store := usagelog.Memory()
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
		if d := a.Admit(addr(i), 0, time.Time{}); d.Outcome != ratelimit.Admitted {
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
	if d := b.Admit(addr(7), 0, time.Time{}); d.Outcome != ratelimit.DayFull {
		t.Fatalf("a caller whose day was used on edge a: %v on edge b", d.Outcome)
	}
	// Edge b's own calls, read back, count once.
	own := addr(day + 100)
	b.Admit(own, 0, time.Time{})
	sync(b)
	sync(b)
	if d := b.Admit(own, 0, time.Time{}); d.Outcome != ratelimit.Admitted || d.Remaining != 1 {
		t.Fatalf("the second of 3 calls after a sync: %v, remaining %d, want 1", d.Outcome, d.Remaining)
	}
}

// flakyStore fails the next writes it is told to: before the batch is
// stored (the insert never reached the server), after (the server took
// it, the answer was lost: an outcome the writer cannot know), or late
// (the answer was lost and the insert lands only after the writer asked
// whether the store holds it, so that it is written again as well).
type flakyStore struct {
	usagelog.Store
	failBefore, failAfter, failHas, failLate int
	adds                                     int
	late                                     func() // the insert still on its way
}

var errFlaky = errors.New("connection reset by peer")

func (f *flakyStore) Add(ctx context.Context, batch analytics.UsageBatch, deltas []analytics.UsageDelta, again bool) error {
	f.adds++
	if f.failLate > 0 {
		f.failLate--
		f.late = func() { _ = f.Store.Add(ctx, batch, deltas, again) }
		return errFlaky
	}
	if f.failBefore > 0 {
		f.failBefore--
		return errFlaky
	}
	if err := f.Store.Add(ctx, batch, deltas, again); err != nil {
		return err
	}
	if f.failAfter > 0 {
		f.failAfter--
		return errFlaky
	}
	return nil
}

func (f *flakyStore) Has(ctx context.Context, batch analytics.UsageBatch, days []time.Time) (bool, error) {
	if f.failHas > 0 {
		f.failHas--
		return false, errFlaky
	}
	has, err := f.Store.Has(ctx, batch, days)
	if f.late != nil {
		f.late() // lands just after the answer
		f.late = nil
	}
	return has, err
}

// TestUnknownWriteOutcomes: a batch whose write failed is settled by
// asking the store whether it holds it, then written again under the
// same name only if it does not: whatever the failure, the
// fleet's count of a caller equals the calls admitted, none lost and
// none counted twice, and this edge's own count agrees once read back.
func TestUnknownWriteOutcomes(t *testing.T) {
	for _, tc := range []struct {
		name                                     string
		failBefore, failAfter, failHas, failLate int
		adds                                     int // writes the store is asked for
	}{
		{name: "lost before the store", failBefore: 1, adds: 3},
		{name: "stored, answer lost", failAfter: 1, adds: 2},
		{name: "stored, answer lost, the check fails once", failAfter: 1, failHas: 1, adds: 2},
		{name: "lost twice, then stored with the answer lost", failBefore: 2, failAfter: 1, adds: 4},
		{name: "arrived after the check, written again", failLate: 1, adds: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			cfg := DefaultConfig()
			cfg.Anonymous = Policy{PerMinute: 1000, PerDay: 1000}
			cfg.Now = func() time.Time { return now }
			mem := usagelog.Memory()
			store := &flakyStore{Store: mem}
			l := New(cfg, store)
			ctx := context.Background()
			if err := l.Usage.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			s := Subject{Addr: netip.MustParseAddr("198.51.100.7")}
			admitted := 0
			admit := func(n int) {
				for range n {
					if d := l.Admit(s, 0, time.Time{}); d.Outcome == ratelimit.Admitted {
						admitted++
					}
				}
			}
			store.failBefore, store.failAfter, store.failHas, store.failLate = tc.failBefore, tc.failAfter, tc.failHas, tc.failLate
			admit(5)
			// Sync until the failures are spent, calls arriving between.
			for i := 0; i < 8; i++ {
				_ = l.Usage.Sync(ctx)
				admit(2)
			}
			if err := l.Usage.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			if err := l.Usage.Sync(ctx); err != nil {
				t.Fatal(err)
			}
			read, err := mem.Day(ctx, now)
			if err != nil {
				t.Fatal(err)
			}
			if got := read.Totals[s.String()]; got != uint64(admitted) {
				t.Errorf("the store counts %d calls, %d were admitted", got, admitted)
			}
			if d := l.Admit(s, 0, time.Time{}); d.Remaining != uint64(1000-admitted-1) {
				t.Errorf("this edge counts %d calls before this one, want %d", 1000-d.Remaining-1, admitted)
			}
			if store.adds < tc.adds {
				t.Errorf("%d writes, want at least %d", store.adds, tc.adds)
			}
		})
	}
}

// TestFleetCountsTheEdgesWriting: the edges that share a caller's
// remainder while the totals are stale are those seen writing usage in
// the last usagelog.FleetWindow.
func TestFleetCountsTheEdgesWriting(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	cfg := DefaultConfig()
	cfg.Now = func() time.Time { return now }
	store := usagelog.Memory()
	ctx := context.Background()
	edges := []*Limiter{New(cfg, store), New(cfg, store), New(cfg, store)}
	for _, l := range edges {
		if err := l.Usage.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if l.Usage.Fleet() != 1 {
			t.Fatalf("a fleet of %d before any write", l.Usage.Fleet())
		}
	}
	// Two of the three write; every one of them reads both.
	for i, l := range edges[:2] {
		l.Admit(Subject{Addr: netip.AddrFrom4([4]byte{10, 0, 0, byte(i)})}, 0, time.Time{})
	}
	for range 2 {
		for _, l := range edges {
			if err := l.Usage.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, want := range []int{2, 2, 3} {
		if got := edges[i].Usage.Fleet(); got != want {
			t.Errorf("edge %d counts a fleet of %d, want %d", i, got, want)
		}
	}
	// An edge started now learns the fleet from its first read of the day.
	late := New(cfg, store)
	if err := late.Usage.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if got := late.Usage.Fleet(); got != 3 {
		t.Errorf("a new edge counts a fleet of %d, want 3 (the two writers and itself)", got)
	}
	// An hour without writes: each is alone again.
	now = now.Add(usagelog.FleetWindow + time.Minute)
	for _, l := range edges {
		if err := l.Usage.Sync(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := edges[2].Usage.Fleet(); got != 1 {
		t.Errorf("after an hour without writes, a fleet of %d, want 1", got)
	}
}
