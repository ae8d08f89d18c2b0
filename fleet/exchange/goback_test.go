package exchange

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/chtest/faultproxy"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/builder"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// readAgain writes a reading at at for the first k live listings of
// firefox in r, their users one more.
func readAgain(t *testing.T, conn driver.Conn, r *replica.Replica, k int, at time.Time) {
	t.Helper()
	var rows []analytics.SnapshotRow
	for _, l := range r.OfStore(views.Firefox) {
		if len(rows) == k {
			break
		}
		if !l.Live() {
			continue
		}
		u, _ := l.Usage()
		usage := uint64(u + 1)
		rows = append(rows, analytics.SnapshotRow{Store: l.Store, ID: l.ID, CrawledAt: at, Usage: &usage})
	}
	if err := analytics.WriteSnapshots(context.Background(), conn, rows); err != nil {
		t.Fatal(err)
	}
}

// TestFollowerNeverGoesBack runs a leader and a follower over a real
// ClickHouse, the follower reaching the leader through a proxy. Cut off
// from its leader, the follower loads newer readings from ClickHouse
// itself; once the link is back, the leader's state is older than the
// follower's, and the follower keeps its own (its data never goes back in
// time); once the leader has read those readings too, the follower takes
// the leader's state again: at once when the leader writes each state
// whole, and also when it writes the newer state as a delta only, its
// whole file due Config.WholeAfter later (the default's 30 s: the
// follower holds no state a delta applies to, so it takes the leader's
// whole state before and the deltas since).
func TestFollowerNeverGoesBack(t *testing.T) {
	ch, err := chtest.Start()
	if errors.Is(err, chtest.ErrNoBinary) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer ch.Stop()
	t.Run("whole states", func(t *testing.T) { followerNeverGoesBack(t, ch, startLeader(t, Config{}), false) })
	t.Run("a delta, the whole an hour later", func(t *testing.T) {
		followerNeverGoesBack(t, ch, startLeaderAsIs(t, Config{Deltas: 12, WholeAfter: time.Hour}), true)
	})
}

// followerNeverGoesBack is TestFollowerNeverGoesBack with the leader l,
// which writes its refreshed state as a delta only when deltaOnly.
func followerNeverGoesBack(t *testing.T, ch *chtest.Server, l *leader, deltaOnly bool) {
	cfg, conn := ch.Migrated(t)
	ctx := context.Background()
	end := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	if _, err := seed.Write(ctx, conn, seed.Options{Seed: 11, Listings: 200, Days: 10, End: end}, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	db := analytics.NewLazy(cfg)
	defer db.Close()
	quiet := slog.New(slog.DiscardHandler)

	leadPub := &views.Published[served.State]{}
	lead := builder.New(db, leadPub, quiet)
	lead.OnPublish(l.pub.Offer)
	run := func(what string, job func(context.Context) error) {
		t.Helper()
		if err := job(ctx); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	written := l.pub.Written()
	run("the leader's load", lead.FullJob("@every 1h").Run)
	waitWritten(t, l, written)

	cut, err := faultproxy.Start(strings.TrimPrefix(l.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	f := follower(t, Config{}, "http://"+cut.Addr(), false)
	pub := &views.Published[served.State]{}
	v := builder.New(db, pub, quiet)
	v.FollowFrom(f)
	run("the follower's first state", v.FullJob("@every 1h").Run)
	taken := pub.Load()
	if taken == nil || taken.Figures == nil || v.FollowedTag() == "" {
		t.Fatalf("the follower did not take the leader's state: %+v, tag %q", taken, v.FollowedTag())
	}
	mark := taken.Replica.Info().ReadingsMark

	// Cut off: the follower's refresh reads ClickHouse itself.
	cut.Set(faultproxy.Reset, 0, 0)
	readAgain(t, conn, taken.Replica, 5, mark.Add(time.Hour))
	run("the follower's refresh while cut off", v.RefreshJob("@every 1h").Run)
	own := pub.Load()
	if !own.Replica.Info().ReadingsMark.After(mark) || v.FollowedTag() != "" {
		t.Fatalf("cut off, the follower did not load the newer readings: newest %v (was %v), tag %q", own.Replica.Info().ReadingsMark, mark, v.FollowedTag())
	}

	// The link back: the leader's state is older than the one served.
	cut.Set(faultproxy.None, 0, 0)
	if err := v.FollowNow(ctx); err != nil {
		t.Fatal(err)
	}
	if got := pub.Load(); got != own {
		t.Fatalf("the follower published its leader's older state: newest reading %v, it served %v", got.Replica.Info().ReadingsMark, own.Replica.Info().ReadingsMark)
	}
	if v.StatesRefused() != 1 {
		t.Fatalf("%d states refused, want 1", v.StatesRefused())
	}

	// The leader reads them too: the follower takes its state again.
	written = l.pub.Written()
	run("the leader's refresh", lead.RefreshJob("@every 1h").Run)
	if deltaOnly {
		waitDelta(t, l, leadPub.Load().Replica.Info().Generation)
	} else {
		waitWritten(t, l, written)
	}
	if err := v.FollowNow(ctx); err != nil {
		t.Fatal(err)
	}
	got, leader := pub.Load(), leadPub.Load()
	if got == own || v.FollowedTag() == "" || !got.Replica.Info().ReadingsMark.Equal(leader.Replica.Info().ReadingsMark) ||
		replica.DigestOf(got.Replica, 0) != replica.DigestOf(leader.Replica, 0) {
		t.Fatalf("the follower did not take its leader's newer state (kept its own: %v, refused %d): newest %v, the leader's %v, tag %q", got == own, v.StatesRefused(),
			got.Replica.Info().ReadingsMark, leader.Replica.Info().ReadingsMark, v.FollowedTag())
	}
}

// waitWritten waits until l's publisher wrote a state after the count n.
func waitWritten(t *testing.T, l *leader, n int64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); l.pub.Written() == n; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the leader's state was not written")
		}
	}
}

// waitDelta waits until l's publisher wrote the delta to the state of
// generation gen.
func waitDelta(t *testing.T, l *leader, gen uint64) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		if set := l.pub.deltas.Load(); set != nil && set.gen == gen {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the leader's state of generation %d was not written", gen)
		}
	}
}
