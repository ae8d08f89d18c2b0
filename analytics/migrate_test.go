package analytics_test

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
)

var srv *chtest.Server

func TestMain(m *testing.M) { chtest.Main(m, &srv) }

// seededDB returns a connection to a fresh migrated database holding the
// dataset o (the test skips without ClickHouse).
func seededDB(t *testing.T, o seed.Options) driver.Conn {
	t.Helper()
	_, conn := chtest.Need(t, srv).Migrated(t)
	if _, err := seed.Write(context.Background(), conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	return conn
}

// schemaOf returns every table of the database with its engine and columns.
func schemaOf(t *testing.T, cfg analytics.Config) map[string]string {
	t.Helper()
	ctx := context.Background()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	out := map[string]string{}
	rows, err := conn.Query(ctx, `SELECT table, name, type FROM system.columns WHERE database = ? ORDER BY table, name`, cfg.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var table, name, typ string
		if err := rows.Scan(&table, &name, &typ); err != nil {
			t.Fatal(err)
		}
		out[table] += name + " " + typ + ", "
	}
	engines, err := conn.Query(ctx, `SELECT name, engine FROM system.tables WHERE database = ?`, cfg.Database)
	if err != nil {
		t.Fatal(err)
	}
	defer engines.Close()
	for engines.Next() {
		var name, engine string
		if err := engines.Scan(&name, &engine); err != nil {
			t.Fatal(err)
		}
		out[name] = engine + ": " + out[name]
	}
	return out
}

func TestMigrateIsIdempotent(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg := srv.NewDatabase(t)
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)

	applied, err := analytics.Migrate(ctx, cfg, log)
	if err != nil {
		t.Fatalf("first migrate: %v", err)
	}
	all, err := analytics.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(applied) != len(all) || len(all) == 0 {
		t.Fatalf("first run applied %v, want all %d migrations", applied, len(all))
	}
	first := schemaOf(t, cfg)
	for _, table := range append([]string{"schema_migrations", "listings_latest_mv", "snapshots_latest_mv", "snapshots_daily_mv"}, analytics.UpstreamTables...) {
		if _, ok := first[table]; !ok {
			t.Errorf("table %s missing after migrate; have %v", table, first)
		}
	}

	again, err := analytics.Migrate(ctx, cfg, log)
	if err != nil {
		t.Fatalf("second migrate: %v", err)
	}
	if len(again) != 0 {
		t.Errorf("second run applied %v, want none", again)
	}
	second := schemaOf(t, cfg)
	if len(first) != len(second) {
		t.Fatalf("schema changed: %d tables then %d", len(first), len(second))
	}
	for table, def := range first {
		if second[table] != def {
			t.Errorf("table %s changed:\n%s\n%s", table, def, second[table])
		}
	}
}

func TestMigrationsParse(t *testing.T) {
	all, err := analytics.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range all {
		if len(m.Statements) == 0 {
			t.Errorf("migration %s has no statements", m.Name)
		}
		for _, s := range m.Statements {
			if s == "" || s[len(s)-1] == ';' {
				t.Errorf("migration %s: bad statement %q", m.Name, s)
			}
		}
	}
}

// TestDropUsageBefore keeps the days of usage from the cut on and drops
// the older ones whole.
func TestDropUsageBefore(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	ctx := context.Background()
	today := time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)
	var deltas []analytics.UsageDelta
	for _, ago := range []int{40, 36, 35, 1, 0} {
		deltas = append(deltas, analytics.UsageDelta{Day: today.AddDate(0, 0, -ago), Subject: "addr:192.0.2.1", Calls: uint64(ago + 1)})
	}
	if err := analytics.WriteUsage(ctx, conn, analytics.UsageBatch{Edge: "test", Seq: 1}, deltas, false); err != nil {
		t.Fatal(err)
	}
	dropped, err := analytics.DropUsageBefore(ctx, conn, today.AddDate(0, 0, -35))
	if err != nil {
		t.Fatal(err)
	}
	if len(dropped) != 2 {
		t.Fatalf("dropped %v, want the days 40 and 36 days ago", dropped)
	}
	for _, ago := range []int{40, 36, 35, 1, 0} {
		got, err := analytics.LoadUsage(ctx, conn, today.AddDate(0, 0, -ago))
		if err != nil {
			t.Fatal(err)
		}
		if kept := got["addr:192.0.2.1"] == uint64(ago+1); kept != (ago <= 35) {
			t.Errorf("%d days ago: %v, kept %v", ago, got, kept)
		}
	}
	if again, err := analytics.DropUsageBefore(ctx, conn, today.AddDate(0, 0, -35)); err != nil || len(again) != 0 {
		t.Fatalf("a second drop: %v %v, want nothing", again, err)
	}
}

// TestRetentionNamesAMissingTable: on a database whose schema is older
// than the binary (a table of a later migration missing), the retention
// says which table is missing and what to run, rather than a driver's
// "no rows".
func TestRetentionNamesAMissingTable(t *testing.T) {
	_, conn := chtest.Need(t, srv).Migrated(t)
	ctx := context.Background()
	if err := conn.Exec(ctx, "DROP TABLE webhook_deliveries"); err != nil {
		t.Fatal(err)
	}
	_, err := analytics.DropWebhookDeliveriesBefore(ctx, conn, time.Now())
	if err == nil || !strings.Contains(err.Error(), "webhook_deliveries is missing") || !strings.Contains(err.Error(), "edge migrate") {
		t.Fatalf("got %v, want the missing table named and edge migrate", err)
	}
}

// TestUsageBatchesAndEdges: a batch written is found by its name on its
// days (and not on others, nor under another sequence number), and the
// edges that wrote usage recently are listed once each.
func TestUsageBatchesAndEdges(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	ctx := context.Background()
	now, err := analytics.ServerNow(ctx, conn)
	if err != nil {
		t.Fatal(err)
	}
	today := now.UTC().Truncate(24 * time.Hour)
	yesterday := today.AddDate(0, 0, -1)
	batch := analytics.UsageBatch{Edge: "edge-a", Seq: 7}
	deltas := []analytics.UsageDelta{{Day: yesterday, Subject: "addr:192.0.2.1", Calls: 3}, {Day: today, Subject: "key:k1", Calls: 2}}
	if err := analytics.WriteUsage(ctx, conn, batch, deltas, false); err != nil {
		t.Fatal(err)
	}
	if err := analytics.WriteUsage(ctx, conn, analytics.UsageBatch{Edge: "edge-b", Seq: 1}, deltas[1:], false); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		batch analytics.UsageBatch
		days  []time.Time
		want  bool
	}{
		{batch, []time.Time{yesterday, today}, true},
		{batch, []time.Time{today}, true},
		{batch, []time.Time{today.AddDate(0, 0, -5)}, false},
		{analytics.UsageBatch{Edge: "edge-a", Seq: 8}, []time.Time{yesterday, today}, false},
		{analytics.UsageBatch{Edge: "edge-c", Seq: 7}, []time.Time{today}, false},
		{batch, nil, false},
	} {
		got, err := analytics.HasUsageBatch(ctx, conn, tc.batch, tc.days)
		if err != nil {
			t.Fatal(err)
		}
		if got != tc.want {
			t.Errorf("HasUsageBatch(%v, %v) = %v, want %v", tc.batch, tc.days, got, tc.want)
		}
	}
	edges, err := analytics.LoadUsageEdges(ctx, conn, now.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(edges)
	if !slices.Equal(edges, []string{"edge-a", "edge-b"}) {
		t.Errorf("edges of the last hour: %v", edges)
	}
	if later, err := analytics.LoadUsageEdges(ctx, conn, now.Add(time.Hour)); err != nil || len(later) != 0 {
		t.Errorf("edges from an hour ahead: %v %v", later, err)
	}
}

// TestUsageCountsABatchWrittenAgainOnce: a batch whose first write
// arrived late, after the edge had found it missing and written it again
// (marked), counts once in the day's usage; a batch written again whose
// first write never arrived counts once too, and so does every other.
func TestUsageCountsABatchWrittenAgainOnce(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	ctx := context.Background()
	day := time.Date(2026, 11, 20, 0, 0, 0, 0, time.UTC)
	write := func(edge string, seq uint64, again bool, deltas ...analytics.UsageDelta) {
		t.Helper()
		if err := analytics.WriteUsage(ctx, conn, analytics.UsageBatch{Edge: edge, Seq: seq}, deltas, again); err != nil {
			t.Fatal(err)
		}
	}
	a := analytics.UsageDelta{Day: day, Subject: "key:a", Calls: 5}
	b := analytics.UsageDelta{Day: day, Subject: "addr:192.0.2.9", Calls: 2}
	write("e1", 1, false, a, b) // arrived late ...
	write("e1", 1, true, a, b)  // ... after it was written again
	write("e1", 2, true, a)     // written again, the first never arrived
	write("e2", 1, false, a)
	write("e2", 1, true, a) // a batch that arrived three times
	write("e2", 1, true, a)
	write("e2", 2, false, b)
	got, err := analytics.LoadUsage(ctx, conn, day)
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]uint64{"key:a": 15, "addr:192.0.2.9": 4}; !maps.Equal(got, want) {
		t.Fatalf("the day's usage: %v, want %v", got, want)
	}
}
