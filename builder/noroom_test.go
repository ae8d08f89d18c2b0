package builder

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// askedSource is a state source that answers err and records how it was
// asked.
type askedSource struct {
	err     error
	asks    int
	noWhole bool
}

func (s *askedSource) Fetch(_ context.Context, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	s.asks++
	s.noWhole = o.NoWhole
	return nil, 0, "", s.err
}

// TestNoRoomForASecondState: with no room for a second whole state
// beside the one held, a leader (its source answers follow.ErrNoSource) still
// refreshes from ClickHouse, which needs no second state; a follower
// still asks its leader, for what changed only (NoWhole), and when the
// leader has only the whole state (ErrNoRoom) it keeps its state and
// counts the wait. Before, both put the ask off: a leader near its limit
// never refreshed again (found at 5M in bench/fleetnet.sh).
func TestNoRoomForASecondState(t *testing.T) {
	end := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	v, r, pub, conn := setup(t, chtest.Need(t, srv), seed.Options{Seed: 5, Listings: 300, Days: 10, End: end})
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	first := pub.Load()
	v.memory = func() (int64, int64) { return 600 << 20, 1 << 30 } // a second state needs 1200 MiB of 1024
	src := &askedSource{err: follow.ErrNoSource}
	v.FollowFrom(src)

	l := first.Replica.All()[0]
	usage := uint64(987654321)
	if err := analytics.WriteSnapshots(context.Background(), conn, []analytics.SnapshotRow{{Store: l.Store, ID: l.ID,
		CrawledAt: end.Add(time.Hour), Usage: &usage}}); err != nil {
		t.Fatal(err)
	}
	if err := r.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	if src.asks != 1 || !src.noWhole {
		t.Fatalf("the source was asked %d times (no whole %v), want once, for what changed only", src.asks, src.noWhole)
	}
	leader := pub.Load()
	if leader == first {
		t.Fatal("a leader without room for a second state did not refresh")
	}
	if u, _ := leader.Replica.Lookup(l.Store, l.ID).Usage(); u != int64(usage) {
		t.Fatalf("the refresh published %d users, want %d", u, usage)
	}

	// A follower whose leader has only the whole state for it.
	src.err = errors.Join(errors.New("fleet: only the whole state"), ErrNoRoom)
	waits := v.ReloadsWaiting()
	if err := r.RunNow("refresh"); err != nil {
		t.Fatalf("a follower without room: %v", err)
	}
	if pub.Load() != leader || v.ReloadsWaiting() != waits+1 || src.asks != 2 {
		t.Fatalf("a follower without room replaced its state or did not wait (waits %d, asks %d)", v.ReloadsWaiting()-waits, src.asks)
	}
	if u, _ := pub.Load().Replica.Lookup(l.Store, l.ID).Usage(); u != int64(usage) {
		t.Fatal("the state held changed")
	}
}

// TestSpareOnlyWhereItFits checks that a follower makes room ahead for
// its next delta's listings (makeSpare) only where that room and the
// rest of the delta's read fit beside its heap under the memory limit,
// and makes it once.
func TestSpareOnlyWhereItFits(t *testing.T) {
	v := New(nil, &views.Published[served.State]{}, slog.New(slog.DiscardHandler))
	v.memory = func() (int64, int64) { return 900 << 20, 1 << 30 }
	v.makeSpare(250_000) // 112 MB of listings and 32 MB of the read's, 124 MiB free
	if v.spareMaking.Load() || v.SpareListings() != 0 {
		t.Fatal("a spare was made where it does not fit")
	}
	v.memory = func() (int64, int64) { return 100 << 20, 1 << 30 }
	v.makeSpare(10_000)
	for deadline := time.Now().Add(30 * time.Second); v.SpareListings() == 0 || v.spareMaking.Load(); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no spare made where it fits")
		}
	}
	made := v.spare.Load()
	if made.Cap() < 10_000 {
		t.Fatalf("a spare for %d listings, want at least 10000", made.Cap())
	}
	v.makeSpare(20_000)
	if v.spareMaking.Load() || v.spare.Load() != made {
		t.Fatal("a second spare was made while one is held")
	}
}
