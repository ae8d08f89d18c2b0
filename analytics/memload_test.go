package analytics_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/memload"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
)

// TestMemloadMatchesClickHouse checks that the in-memory loader, which
// the HTTP tests run on without a database, gives what the loaders read
// from ClickHouse holding the same rows: every listing with its figures,
// growth bases and sparkline, and the week states of editions.
func TestMemloadMatchesClickHouse(t *testing.T) {
	o := seed.Options{Seed: 21, Listings: 900, Days: 40, ReviewsPerListing: 0,
		End: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)}
	conn := seededDB(t, o)
	ctx := context.Background()
	// The loaders read merged tables (FINAL); a day's sparkline point is
	// the day's latest reading once merged.
	onePartEach(t, conn, analytics.UpstreamTables)
	want, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 3, History: true})
	if err != nil {
		t.Fatal(err)
	}
	rows := seed.Generate(o)
	d := memload.New(rows.Listings, rows.Snapshots)
	got := d.Replica(3, time.Now())
	wi, gi := want.Info(), got.Info()
	if !wi.ReadingsMark.Equal(gi.ReadingsMark) || !wi.ListingsMark.Equal(gi.ListingsMark) || !wi.ClimbAt.Equal(gi.ClimbAt) {
		t.Fatalf("marks differ: ClickHouse %+v, memload %+v", wi, gi)
	}
	sameReplica(t, want, got)
	var n int64
	if n, err = analytics.CountSnapshots(ctx, conn, wi.ReadingsMark); err != nil || n != d.Snapshots() {
		t.Fatalf("%d snapshots in ClickHouse (%v), %d in memory", n, err, d.Snapshots())
	}
	for _, at := range []time.Time{o.End.Add(-10 * 24 * time.Hour).Truncate(24 * time.Hour), o.End.Truncate(24 * time.Hour)} {
		ws, err := analytics.LoadWeekState(ctx, conn, at, 0)
		if err != nil {
			t.Fatal(err)
		}
		if gs := d.WeekState(at); !reflect.DeepEqual(ws, gs) {
			t.Fatalf("week state at %s differs: %d listings from ClickHouse, %d in memory", at, len(ws.Listings), len(gs.Listings))
		}
	}
	_ = views.Day(0)
}
