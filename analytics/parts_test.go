package analytics_test

import (
	"context"
	"reflect"
	"runtime/debug"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views/replica"
)

// boundedCap is the ClickHouse memory cap of TestLoadsInBoundedMemory.
// On ClickHouse 18.16 (two cores, tables merged into one data part, the
// edge's 128 KiB read buffers), every read of a part of 5,000 listings
// needs 28–32 MiB, most of it the fixed cost of its column streams; a
// full load of the test's biggest store read at once needs over 40 MiB
// for its growth bases alone.
const boundedCap = 36 << 20

// TestLoadsInBoundedMemory proves that every read of a full load (the
// replica with growth bases, climb bases and sparklines, a week state for
// editions, a day's ranks) needs memory that grows with its part, not
// with the listings: under a ClickHouse max_memory_usage that a read of
// everything at once exceeds, and a low Go memory limit, the loads split
// into parts succeed and give exactly what an unconstrained load gives.
func TestLoadsInBoundedMemory(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg, conn := srv.Migrated(t)
	ctx := context.Background()
	o := seed.Options{Seed: 9, Listings: 60_000, Days: 35, ReviewsPerListing: 0,
		End: time.Date(2026, 6, 3, 10, 0, 0, 0, time.UTC)}
	if _, err := seed.Write(ctx, conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// One data part per table: a read's fixed cost (buffers per column
	// and data part) is then the same on every run.
	onePartEach(t, conn, analytics.UpstreamTables)
	capped := cfg
	capped.MaxQueryMemory = boundedCap
	low, err := analytics.Open(ctx, capped)
	if err != nil {
		t.Fatal(err)
	}
	defer low.Close()
	const whole, part = 1 << 30, 5_000

	// The cap bites: one read of a whole store does not fit.
	_, err = analytics.LoadReplica(ctx, low, analytics.ReplicaOptions{History: true, PartSize: whole})
	if err == nil || !strings.Contains(err.Error(), "Memory limit") {
		t.Fatalf("a load in one part under %d MiB: %v, want ClickHouse's memory limit", boundedCap>>20, err)
	}

	want, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 2, History: true, PartSize: whole})
	if err != nil {
		t.Fatal(err)
	}
	// The edge's side of the bound: a soft Go limit far under the
	// replica, which only makes the collector work harder.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(16 << 20))
	var parts int
	got, err := analytics.LoadReplica(ctx, low, analytics.ReplicaOptions{Generation: 2, History: true, PartSize: part,
		Progress: func(_, total int) { parts = total }})
	if err != nil {
		t.Fatalf("a load in parts of %d under %d MiB: %v", part, boundedCap>>20, err)
	}
	if parts < o.Listings/part {
		t.Fatalf("the load read %d parts, want at least %d", parts, o.Listings/part)
	}
	sameReplica(t, want, got)

	// Sharing strings with the replica being replaced changes nothing.
	shared, err := analytics.LoadReplica(ctx, low, analytics.ReplicaOptions{Generation: 2, History: true, PartSize: part, Share: got})
	if err != nil {
		t.Fatal(err)
	}
	sameReplica(t, want, shared)
	// (Names and descriptions live in the text index's arenas, one per
	// replica; the other strings are shared.)
	if a, b := shared.All()[0].Icon, got.All()[0].Icon; a == "" || a != b || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("a reload does not share an unchanged icon %q with the replica it replaces", a)
	}

	// History added to a bare replica, as after a restart.
	bare, err := analytics.LoadReplica(ctx, low, analytics.ReplicaOptions{Generation: 2, PartSize: part})
	if err != nil {
		t.Fatal(err)
	}
	b := replica.BuilderFrom(bare)
	info := want.Info()
	if err := analytics.AddHistory(ctx, low, b, info, part); err != nil {
		t.Fatal(err)
	}
	sameReplica(t, want, b.Build(info))

	// Week states for editions.
	at := o.End.Truncate(24 * time.Hour).Add(-3 * 24 * time.Hour)
	wantWeek, err := analytics.LoadWeekState(ctx, conn, at, whole)
	if err != nil {
		t.Fatal(err)
	}
	gotWeek, err := analytics.LoadWeekState(ctx, low, at, part)
	if err != nil {
		t.Fatalf("week state in parts under the cap: %v", err)
	}
	if len(gotWeek.Listings) < o.Listings/2 || !reflect.DeepEqual(wantWeek, gotWeek) {
		t.Fatalf("week state: %d listings in one part, %d in parts, or they differ", len(wantWeek.Listings), len(gotWeek.Listings))
	}

	// A day's ranks: computed in one part without a cap, then in parts
	// under it (a newer version replaces every row).
	day := analytics.RankDay{Day: at, Crawls: 1}
	if err := analytics.RankOneDay(ctx, conn, day, whole); err != nil {
		t.Fatal(err)
	}
	wantRanks := ranksOf(t, conn, at.Format(time.DateOnly))
	if err := analytics.RankOneDay(ctx, low, day, part); err != nil {
		t.Fatalf("ranks in parts under the cap: %v", err)
	}
	gotRanks := ranksOf(t, conn, at.Format(time.DateOnly))
	if len(wantRanks) < o.Listings/2 || !reflect.DeepEqual(wantRanks, gotRanks) {
		t.Fatalf("ranks: %d in one part, %d in parts, or they differ", len(wantRanks), len(gotRanks))
	}
}

// onePartEach merges every partition of tables into one data part. An
// OPTIMIZE ... FINAL does nothing while a background merge holds some of
// a partition's parts, and a read over several data parts needs more
// memory than over one, so it is repeated
// until system.parts shows one active part a partition.
func onePartEach(t *testing.T, conn driver.Conn, tables []string) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(time.Minute)
	for _, table := range tables {
		for {
			if err := conn.Exec(ctx, "OPTIMIZE TABLE "+table+" FINAL"); err != nil {
				t.Fatal(err)
			}
			var most uint64
			if err := conn.QueryRow(ctx, `SELECT max(n) FROM (SELECT count() AS n FROM system.parts
				WHERE active AND database = currentDatabase() AND table = ? GROUP BY partition)`, table).Scan(&most); err != nil {
				t.Fatal(err)
			}
			if most <= 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("table %s still has %d data parts in a partition after OPTIMIZE FINAL for a minute", table, most)
			}
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// sameReplica fails unless both replicas hold the same listings with the
// same figures and history.
func sameReplica(t *testing.T, want, got *replica.Replica) {
	t.Helper()
	if got.Len() != want.Len() || want.Len() == 0 {
		t.Fatalf("%d listings, want %d", got.Len(), want.Len())
	}
	fixed := time.Unix(1_700_000_000, 0)
	bad := 0
	for i := range want.All() {
		w, g := want.All()[i], got.All()[i]
		w.Hist.SetComputedAt(fixed)
		g.Hist.SetComputedAt(fixed)
		if !reflect.DeepEqual(w, g) {
			if bad++; bad <= 3 {
				t.Errorf("listing %s/%s:\nwant %+v\ngot  %+v", w.Store, w.ID, w, g)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d listings differ", bad, want.Len())
	}
}
