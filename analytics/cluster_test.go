package analytics_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views/replica"
)

// startCluster starts ZooKeeper and a cluster of two shards, the first
// with two replicas, for one test. Without ZooKeeper or ClickHouse the
// test skips, except under CI.
func startCluster(t *testing.T) *chtest.Cluster {
	t.Helper()
	c, err := chtest.StartCluster(2, 1)
	switch {
	case err == nil:
		t.Cleanup(c.Stop)
		return c
	case (errors.Is(err, chtest.ErrNoZooKeeper) || errors.Is(err, chtest.ErrNoBinary)) && os.Getenv("CI") != "true":
		t.Skip(err)
	}
	t.Fatal(err)
	return nil
}

// clusterDB migrates a fresh database on c and opens it.
func clusterDB(t *testing.T, c *chtest.Cluster, name string) (analytics.Config, driver.Conn) {
	t.Helper()
	ctx := context.Background()
	cfg, drop, err := c.Migrated(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(drop)
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return cfg, conn
}

// sameListings fails the test where two replicas' listings differ, the
// load's own times left out.
func sameListings(t *testing.T, what string, got, want *replica.Replica) {
	t.Helper()
	if got.Len() != want.Len() {
		t.Fatalf("%s: %d listings, want %d", what, got.Len(), want.Len())
	}
	for i := range want.All() {
		g, w := got.All()[i], want.All()[i]
		g.Hist.SetComputedAt(time.Time{})
		w.Hist.SetComputedAt(time.Time{})
		if !reflect.DeepEqual(g, w) {
			t.Fatalf("%s: listing %s/%s differs:\n got %+v\nwant %+v", what, w.Store, w.ID, g, w)
		}
	}
}

// TestClusterNeedsTheProfile: a connection to a cluster whose user's
// profile lacks distributed_product_mode = 'local' fails, naming it.
func TestClusterNeedsTheProfile(t *testing.T) {
	cfg := chtest.Need(t, srv).Config("default")
	cfg.Cluster = "edge"
	conn, err := analytics.Open(context.Background(), cfg)
	if err == nil {
		conn.Close()
		t.Fatal("connected to a cluster without the profile's setting")
	}
	if !strings.Contains(err.Error(), "distributed_product_mode") {
		t.Fatalf("the error does not name the setting: %v", err)
	}
}

// TestSchemaAndLoadsOnACluster migrates a database on a cluster of two
// shards (one of two replicas) through ZooKeeper, twice (the second run
// changes nothing), seeds it through the Distributed tables, and loads
// the replica with its history from it: the same listings, figures and
// histories as from one server holding the same seed. Then it stops the
// first replica: the load goes on through the next address.
func TestSchemaAndLoadsOnACluster(t *testing.T) {
	single := chtest.Need(t, srv)
	c := startCluster(t)
	ctx := context.Background()
	cfg, conn := clusterDB(t, c, fmt.Sprintf("cl%d", os.Getpid()))
	if again, err := analytics.Migrate(ctx, cfg, slog.New(slog.DiscardHandler)); err != nil || len(again) != 0 {
		t.Fatalf("second migration on the cluster: applied %v, %v; want nothing to do", again, err)
	}
	// Every server has every table: a replicated local one and the
	// Distributed one.
	for _, s := range c.Servers() {
		one := s.Config(cfg.Database)
		sc, err := analytics.Open(ctx, one)
		if err != nil {
			t.Fatal(err)
		}
		var local, dist uint64
		err = sc.QueryRow(ctx, `SELECT countIf(engine LIKE 'Replicated%'), countIf(engine = 'Distributed')
			FROM system.tables WHERE database = currentDatabase()`).Scan(&local, &dist)
		sc.Close()
		if err != nil || local == 0 || local != dist {
			t.Fatalf("%s: %d replicated and %d distributed tables (%v): want one of each a table", s.Addr, local, dist, err)
		}
	}

	o := seed.Options{Seed: 5, Listings: 600, Days: 40, ReviewsPerListing: 2, End: time.Date(2026, 7, 15, 9, 0, 0, 0, time.UTC)}
	if _, err := seed.Write(ctx, conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	_, one := single.Migrated(t)
	if _, err := seed.Write(ctx, one, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	// Both shards hold rows: the listings are spread.
	for i, shard := range c.Shards {
		sc, err := analytics.Open(ctx, shard[0].Config(cfg.Database))
		if err != nil {
			t.Fatal(err)
		}
		var n uint64
		err = sc.QueryRow(ctx, "SELECT count() FROM snapshots_local").Scan(&n)
		sc.Close()
		if err != nil || n == 0 {
			t.Fatalf("shard %d holds %d readings (%v)", i+1, n, err)
		}
	}
	load := func(c driver.Conn) *replica.Replica {
		r, err := analytics.LoadReplica(ctx, c, analytics.ReplicaOptions{Generation: 1, History: true, PartSize: 200})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	want := load(one)
	if want.Len() < 500 || want.Info().ReadingsMark.IsZero() {
		t.Fatalf("the single server's replica has %d listings", want.Len())
	}
	sameListings(t, "cluster", load(conn), want)

	// The usage of two days, summed per shard by the view and dropped a
	// day at a time on every server; then the whole dataset reset.
	day := time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC)
	for i, d := range []time.Time{day.AddDate(0, 0, -1), day} {
		deltas := []analytics.UsageDelta{{Day: d, Subject: "key:a", Calls: 3}, {Day: d, Subject: "addr:b", Calls: 4}}
		if err := analytics.WriteUsage(ctx, conn, analytics.UsageBatch{Edge: "e", Seq: uint64(i)}, deltas, false); err != nil {
			t.Fatal(err)
		}
	}
	if u, err := analytics.LoadUsage(ctx, conn, day); err != nil || u["key:a"] != 3 || u["addr:b"] != 4 {
		t.Fatalf("usage of a day on the cluster: %v %v", u, err)
	}
	if dropped, err := analytics.DropUsageBefore(ctx, conn, day); err != nil || len(dropped) != 1 {
		t.Fatalf("dropped %v, %v; want the day before", dropped, err)
	}
	for d, want := range map[time.Time]uint64{day.AddDate(0, 0, -1): 0, day: 3} {
		if u, err := analytics.LoadUsage(ctx, conn, d); err != nil || u["key:a"] != want {
			t.Fatalf("usage of %s after the drop: %v %v, want %d", d.Format(time.DateOnly), u, err, want)
		}
	}

	// The first replica of the first shard goes away: a new connection
	// goes to the next address, and the shard's other replica answers
	// for it.
	c.Shards[0][0].Pause()
	again, err := analytics.Open(ctx, cfg)
	if err != nil {
		t.Fatalf("open with the first replica down: %v", err)
	}
	defer again.Close()
	sameListings(t, "cluster without its first replica", load(again), want)
	if err := c.Shards[0][0].Resume(); err != nil {
		t.Fatal(err)
	}

	// A reset empties the tables on every server.
	if err := analytics.Reset(ctx, conn); err != nil {
		t.Fatalf("reset on the cluster: %v", err)
	}
	if empty, err := analytics.IsEmpty(ctx, conn); err != nil || !empty {
		t.Fatalf("after a reset: empty %v, %v", empty, err)
	}
}
