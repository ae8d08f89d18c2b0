package builder

import (
	"context"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

// TestAStateIsAsOfItsNewestReading crawls listings while a full reload
// over a real ClickHouse reads its parts, some in the part read first and
// some in the last: the state published is as of the bound the reload read
// when it began (asOf), so it holds none of those readings, in any part,
// and no listing's reading is newer than the state's own newest (its
// dataAsOf and Last-Modified); the refresh after it takes every one of
// them, and is the state an edge loading the same data afresh holds.
func TestAStateIsAsOfItsNewestReading(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg, conn := srv.Migrated(t)
	ctx := context.Background()
	end := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	if _, err := seed.Write(ctx, conn, seed.Options{Seed: 13, Listings: 400, Days: 10, End: end}, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	cfg.PartSize = 60
	db := analytics.NewLazy(cfg)
	t.Cleanup(func() { db.Close() })
	pub := &views.Published[served.State]{}
	v := New(db, pub, quiet())
	r := cron.New(ctx, quiet(), fastBackoff())
	r.Add(v.FullJob("@every 1h"))
	r.Add(v.RefreshJob("@every 1h"))
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	first := pub.Load()
	mark := first.Replica.Info().ReadingsMark
	all := first.Replica.All()
	if len(all) < 200 {
		t.Fatalf("%d listings", len(all))
	}
	// Read again while the reload reads: the first listings by key (in
	// the part read first) and the last (in the part read last).
	var crawled []views.Listing
	for _, l := range append(append([]views.Listing{}, all[:20]...), all[len(all)-20:]...) {
		if l.Live() {
			crawled = append(crawled, l)
		}
	}
	at := mark.Add(time.Hour)
	v.afterPart = func() {
		v.afterPart = nil
		rows := make([]analytics.SnapshotRow, 0, len(crawled))
		for _, l := range crawled {
			u, _ := l.Usage()
			usage := uint64(u + 1000)
			rows = append(rows, analytics.SnapshotRow{Store: l.Store, ID: l.ID, CrawledAt: at, Usage: &usage})
		}
		if err := analytics.WriteSnapshots(ctx, conn, rows); err != nil {
			t.Error(err)
		}
	}
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	reloaded := pub.Load()
	if reloaded == first || v.afterPart != nil {
		t.Fatal("the reload published nothing, or its parts were never read")
	}
	asOf := reloaded.Replica.Info().ReadingsMark
	if !asOf.Equal(mark) {
		t.Errorf("the state's newest reading %v, want the bound's %v (the crawl at %v came after it)", asOf, mark, at)
	}
	for _, l := range reloaded.Replica.All() {
		if l.ReadAt > asOf.Unix() {
			t.Fatalf("listing %s/%s read at %v, after the state's newest reading %v", l.Store, l.ID, time.Unix(l.ReadAt, 0).UTC(), asOf)
		}
	}
	sameListings(t, "the reload and the state it replaced (nothing new before its bound)", first.Replica, reloaded.Replica)

	// The refresh after it: every crawl of the reload's time, in every part.
	if err := r.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	refreshed := pub.Load()
	if got := refreshed.Replica.Info().ReadingsMark; !got.Equal(at) {
		t.Errorf("the refreshed state's newest reading %v, want the crawl's %v", got, at)
	}
	missed := 0
	for _, c := range crawled {
		if l := refreshed.Replica.Lookup(c.Store, c.ID); l == nil || l.ReadAt != at.Unix() {
			missed++
		}
	}
	if missed > 0 {
		t.Errorf("%d of the %d listings crawled during the reload hold an older reading after the refresh", missed, len(crawled))
	}
	sameListings(t, "the refreshed state and a first load of the same data", loadAfresh(t, v).Replica, refreshed.Replica)
}
