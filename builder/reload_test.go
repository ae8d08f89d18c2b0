package builder

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// deltaOf returns what a fleet's leader would send a follower holding
// from when it publishes to: the delta's statistics and its bytes, and
// the bytes of to whole.
func deltaOf(t *testing.T, from, to *served.State) (st replica.DeltaStats, delta, whole int64) {
	t.Helper()
	var d counter
	st, err := replica.WriteDelta(&d, from.Replica, replica.DigestOf(from.Replica, 0), to.Replica, 0, replica.DigestOf(to.Replica, 0))
	if err != nil {
		t.Fatal(err)
	}
	whole, err = replica.WriteSnapshot(io.Discard, to.Replica, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st, int64(d), whole
}

type counter int64

func (c *counter) Write(p []byte) (int, error) { *c += counter(len(p)); return len(p), nil }

// newReadings writes a reading at at for each of the first k live listings
// of firefox in r (their users one more); it returns their ids.
func newReadings(t *testing.T, conn driver.Conn, r *replica.Replica, k int, at time.Time) []string {
	t.Helper()
	var rows []analytics.SnapshotRow
	var ids []string
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
		ids = append(ids, l.ID)
	}
	if err := analytics.WriteSnapshots(context.Background(), conn, rows); err != nil {
		t.Fatal(err)
	}
	return ids
}

// sameListings fails unless a and b hold the same listings, byte for byte
// in their binary form, naming the first that differs.
func sameListings(t *testing.T, what string, a, b *replica.Replica) {
	t.Helper()
	if a.Len() != b.Len() {
		t.Fatalf("%s: %d listings and %d", what, a.Len(), b.Len())
	}
	for i := range a.All() {
		x, y := views.AppendListing(nil, &a.All()[i]), views.AppendListing(nil, &b.All()[i])
		if !bytes.Equal(x, y) {
			t.Fatalf("%s: listing %s/%s differs:\n%s\n%s", what, a.All()[i].Store, a.All()[i].ID, histOf(&a.All()[i]), histOf(&b.All()[i]))
		}
	}
}

func histOf(l *views.Listing) string {
	var spark []views.SparkPoint
	l.Hist.Sparkline(func(p views.SparkPoint) { spark = append(spark, p) })
	return fmt.Sprintf("read %d, climb %+v, computed %v, 7d %+v, spark %d points %v", l.ReadAt, l.Hist.ClimbBase(), l.Hist.ComputedAt(), l.Hist.SizeBase(views.Window7d), len(spark), spark)
}

// TestFullReloadSendsWhatChanged runs a leader's hour over a real
// ClickHouse: a full load, new readings a refresh takes, then the full
// reload. The reload reads nothing the refresh did not: the delta a
// follower would take holds no listing. New readings no refresh took show
// as that many listings, and the state the reloads give is the one an
// edge loading the same data afresh holds.
func TestFullReloadSendsWhatChanged(t *testing.T) {
	srv := chtest.Need(t, srv)
	end := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
	v, r, pub, conn := setup(t, srv, seed.Options{Seed: 7, Listings: 600, Days: 100, End: end})
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	loaded := pub.Load()
	mark := loaded.Replica.Info().ReadingsMark
	if views.DayOf(mark) != views.DayOf(end) {
		t.Fatalf("the data's newest reading %v is not on the day of the seed's end", mark)
	}

	// An hour of the crawl: 7 listings read again, taken by a refresh.
	newReadings(t, conn, loaded.Replica, 7, mark.Add(time.Hour))
	if err := r.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	refreshed := pub.Load()
	if st, _, _ := deltaOf(t, loaded, refreshed); st.Changed != 7 {
		t.Fatalf("the refresh changed %d listings, want 7", st.Changed)
	}
	// The hourly full reload: nothing the refresh did not read.
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	reloaded := pub.Load()
	if reloaded == refreshed {
		t.Fatal("the full reload published nothing")
	}
	st, delta, whole := deltaOf(t, refreshed, reloaded)
	if st.Changed != 0 || st.Removed != 0 || delta > whole/50 {
		t.Errorf("a full reload of nothing new: %d listings changed, %d removed, %d B of delta for a state of %d B", st.Changed, st.Removed, delta, whole)
	}
	sameListings(t, "the reload and the refreshed state", refreshed.Replica, reloaded.Replica)

	// 5 listings read again that no refresh took: the reload sends those 5.
	newReadings(t, conn, reloaded.Replica, 5, mark.Add(2*time.Hour))
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	next := pub.Load()
	if st, _, _ := deltaOf(t, reloaded, next); st.Changed != 5 || st.Removed != 0 {
		t.Errorf("a full reload after 5 listings were read again: %d changed, %d removed", st.Changed, st.Removed)
	}

	// An edge loading the same data afresh holds the same listings.
	sameListings(t, "the reloaded state and a first load's", loadAfresh(t, v).Replica, next.Replica)

	// The data's next day: its first full reload moves the charts' window
	// and the climb time a day on, which changes the listings whose sizes
	// at those instants differ; the state is still a first load's.
	newReadings(t, conn, next.Replica, 3, views.DayOf(mark).Time().Add(24*time.Hour+time.Minute))
	if err := r.RunNow("refresh"); err != nil {
		t.Fatal(err)
	}
	rolled := pub.Load()
	if rolled.Replica.Info().ChartTo != next.Replica.Info().ChartTo {
		t.Fatal("a refresh moved the charts' window")
	}
	if err := r.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	day := pub.Load()
	if got, want := day.Replica.Info().ChartTo, next.Replica.Info().ChartTo.Add(24*time.Hour); !got.Equal(want) {
		t.Fatalf("the charts' window ends at %v on the data's next day, want %v", got, want)
	}
	st, delta, whole = deltaOf(t, rolled, day)
	t.Logf("the first full reload of a day: %d of %d listings changed, %d B of delta for a state of %d B", st.Changed, day.Replica.Len(), delta, whole)
	sameListings(t, "the day's first reload and a first load's", loadAfresh(t, v).Replica, day.Replica)
}

// loadAfresh returns the state an edge that loads v's data from nothing
// publishes.
func loadAfresh(t *testing.T, v *Builder) *served.State {
	t.Helper()
	pub := &views.Published[served.State]{}
	if err := New(v.db, pub, quiet()).full(context.Background()); err != nil {
		t.Fatal(err)
	}
	return pub.Load()
}
