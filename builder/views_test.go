package builder

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

var srv *chtest.Server

func TestMain(m *testing.M) { chtest.Main(m, &srv) }

// setup seeds a database with o and returns the state builder, a runner
// holding its jobs (not started), the published state and a connection.
func setup(t *testing.T, server *chtest.Server, o seed.Options) (*Builder, *cron.Runner, *views.Published[served.State], driver.Conn) {
	t.Helper()
	cfg, conn := server.Migrated(t)
	ctx := context.Background()
	if _, err := seed.Write(ctx, conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	db := analytics.NewLazy(cfg)
	t.Cleanup(func() { db.Close() })
	pub := &views.Published[served.State]{}
	v := New(db, pub, quiet())
	r := cron.New(ctx, quiet(), fastBackoff())
	r.Add(v.FullJob("@every 1h"))
	r.Add(v.RefreshJob("@every 1h"))
	return v, r, pub, conn
}

// TestClickHouseDiesMidRebuild stops ClickHouse after the first part of a
// full rebuild: the previous state keeps serving, the job reports the
// error, and the next successful build publishes.
func TestClickHouseDiesMidRebuild(t *testing.T) {
	chtest.Need(t, srv) // skips without ClickHouse
	// A server of its own: this test kills it.
	own, err := chtest.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer own.Stop()
	v, r, pub, _ := setup(t, own, seed.Options{Seed: 2, Listings: 300, Days: 20, End: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)})
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	good := pub.Load()
	if good == nil || good.Figures == nil || good.Replica.Info().Generation != 2 {
		t.Fatalf("first build: %+v", good)
	}

	v.afterPart = own.Pause
	err = r.RunNow("views")
	if err == nil {
		t.Fatal("a rebuild without ClickHouse succeeded")
	}
	if pub.Load() != good {
		t.Fatal("a failed rebuild replaced the published state")
	}
	st := r.Status()[0]
	if st.Failures != 1 || st.LastError == "" || st.Runs != 1 {
		t.Fatalf("status after the failure %+v", st)
	}
	if l := pub.Load().Replica.Lookup(good.Replica.All()[0].Store, good.Replica.All()[0].ID); l == nil {
		t.Fatal("the previous state no longer answers")
	}

	v.afterPart = nil
	if err := own.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := r.RunNow("views"); err != nil {
		t.Fatalf("rebuild after recovery: %v", err)
	}
	next := pub.Load()
	if next == good || next.Figures == nil || next.Replica.Info().Generation <= good.Replica.Info().Generation {
		t.Fatalf("no new generation after recovery: %d", next.Replica.Info().Generation)
	}
	if st := r.Status()[0]; st.Runs != 2 || !st.LastSuccess.After(st.LastErrorAt) {
		t.Fatalf("status after recovery %+v", st)
	}
}

// TestRefreshReadsOnlyChangedListings adds readings for a few listings and
// checks that the incremental refresh reads those and publishes them.
func TestRefreshReadsOnlyChangedListings(t *testing.T) {
	srv := chtest.Need(t, srv)
	end := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	_, r, pub, conn := setup(t, srv, seed.Options{Seed: 4, Listings: 400, Days: 20, End: end})
	ctx := context.Background()
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	before := pub.Load()
	if err := r.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	if pub.Load() != before {
		t.Fatal("a refresh with nothing new published a new state")
	}
	// Nor did it copy the replica: the one it had comes back.
	if same, n, err := analytics.RefreshReplica(ctx, conn, before.Replica, 99); err != nil || n != 0 || same != before.Replica {
		t.Fatalf("a refresh with nothing new: %d changed, the replica itself %v, err %v", n, same == before.Replica, err)
	}
	// The largest listing, read several times a day, so that its 1-day
	// base stays within the window's tolerance once a new reading arrives
	// (small listings are read every third day: their 1-day growth is null).
	var target *views.Listing
	var largest int64 = -1
	for _, l := range before.Replica.OfStore(views.Firefox) {
		if size, ok := l.Size(); ok && l.Live() && size > largest {
			target, largest = &l, size
		}
	}
	usage := uint64(123456789)
	if err := analytics.WriteSnapshots(ctx, conn, []analytics.SnapshotRow{{Store: views.Firefox, ID: target.ID,
		CrawledAt: end.Add(time.Hour), Usage: &usage}}); err != nil {
		t.Fatal(err)
	}
	if err := r.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	after := pub.Load()
	if after == before || after.Replica.Len() != before.Replica.Len() {
		t.Fatalf("refresh did not publish the change (%d listings)", after.Replica.Len())
	}
	l := after.Replica.Lookup(views.Firefox, target.ID)
	if u, _ := l.Usage(); u != int64(usage) {
		t.Fatalf("refreshed usage %d", u)
	}
	// Its sort orders merged from the figures before, as a follower's
	// after a delta (listq.TestBuildFromIsBuild: the same orders).
	if !after.Figures.Merged() {
		t.Error("the refresh sorted every listing again, not merged from the figures before")
	}
	if st, _, _, _ := after.Figures.Ranks(l); st != 1 {
		t.Errorf("the new giant ranks %d, want 1", st)
	}
	if g, ok := l.SizeGrowth(views.Window1d); !ok || g.Delta <= 0 {
		t.Errorf("refreshed listing's growth %+v %v", g, ok)
	}
	// Unchanged listings keep their history.
	for i, old := range before.Replica.All() {
		if old.ID == target.ID {
			continue
		}
		if now := after.Replica.All()[i]; now.Hist.SizeBase(views.Window7d) != old.Hist.SizeBase(views.Window7d) {
			t.Fatalf("unchanged listing %s lost its history", old.ID)
		}
	}
}

// TestFullReloadWaitsForMemory checks that a full reload that would not fit
// beside the published state under the memory limit waits (the state
// keeps serving, nothing fails) and runs once it fits.
func TestFullReloadWaitsForMemory(t *testing.T) {
	v, r, pub, _ := setup(t, chtest.Need(t, srv), seed.Options{Seed: 3, Listings: 200, Days: 10, End: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)})
	live, limit := int64(600<<20), int64(1<<30)
	v.memory = func() (int64, int64) { return live, limit }
	drops := 0 // the answer cache is dropped before a reload's build, not a first load's
	v.OnReloadBuild(func() { drops++ })
	if err := r.RunNow("views"); err != nil { // the first load has nothing to fit beside
		t.Fatal(err)
	}
	first := pub.Load()
	if first == nil || first.Figures == nil {
		t.Fatal("no first state")
	}
	if first.Replica.TextIndexBytes() == 0 {
		t.Fatal("the first load left its text without an index")
	}
	if err := r.RunNow("views"); err != nil {
		t.Fatalf("a reload put off for memory failed: %v", err)
	}
	if pub.Load() != first || v.ReloadsWaiting() != 1 {
		t.Fatalf("a reload needing 1200 MiB under a 1024 MiB limit ran (waits %d)", v.ReloadsWaiting())
	}
	live = 400 << 20
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	next := pub.Load()
	if next == first || next.Replica.Info().Generation <= first.Replica.Info().Generation {
		t.Fatal("a reload that fits did not publish")
	}
	if next.Replica.TextIndexBytes() == 0 {
		t.Fatal("the reload left its text without an index")
	}
	if !next.Replica.SharesText(first.Replica) {
		t.Fatal("a reload of unchanged listings copied their text again")
	}
	if drops != 1 {
		t.Fatalf("the answer cache was dropped %d times for one reload (and one first load, one put off)", drops)
	}
	limit = math.MaxInt64 // no limit: always fits
	live = 1 << 40
	if err := r.RunNow("views"); err != nil || v.ReloadsWaiting() != 1 {
		t.Fatalf("without a limit the reload waited or failed: %v, waits %d", err, v.ReloadsWaiting())
	}
}

// TestALeaderKeepsRoomForItsRefresh checks that a fleet's leader (its
// source answers follow.ErrNoSource) collects after its loads and its refreshes
// keeping the pages for its next refresh, whose new listings array it
// allocates then (none made ahead), and that a single edge does neither
// (it returns a load's pages to the system: memory.CollectReplaced).
func TestALeaderKeepsRoomForItsRefresh(t *testing.T) {
	end := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	v, r, pub, conn := setup(t, chtest.Need(t, srv), seed.Options{Seed: 6, Listings: 300, Days: 10, End: end})
	var kept keptRoom
	v.keepRoom = kept.keep
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if len(kept) != 0 {
		t.Fatalf("a single edge kept room after its first load: %q", kept)
	}
	v.FollowFrom(&askedSource{err: follow.ErrNoSource})
	n := pub.Load().Replica.Len()
	want := fmt.Sprintf("%d listings, %d B of listings, spare ahead false", n, int64(spareRoom(n))*int64(unsafe.Sizeof(views.Listing{})))
	l := pub.Load().Replica.All()[0]
	usage := uint64(987654)
	if err := analytics.WriteSnapshots(context.Background(), conn, []analytics.SnapshotRow{{Store: l.Store, ID: l.ID,
		CrawledAt: end.Add(time.Hour), Usage: &usage}}); err != nil {
		t.Fatal(err)
	}
	before := pub.Load()
	if err := r.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	if pub.Load() == before || !slices.Equal(kept, keptRoom{want}) {
		t.Fatalf("a leader's refresh (published %v) kept %q, want %q", pub.Load() != before, kept, want)
	}
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(kept, keptRoom{want, want}) {
		t.Fatalf("a leader's reload kept %q, want %q", kept, keptRoom{want, want})
	}
}

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func fastBackoff() cron.Backoff {
	return cron.Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond}
}
