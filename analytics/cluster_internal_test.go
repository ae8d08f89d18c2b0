package analytics

import (
	"strings"
	"testing"
)

// TestEveryTableHasAShardKey gives every statement of every migration
// its cluster form: each table a shard key and a replicated engine, each
// view its local tables, nothing left without one.
func TestEveryTableHasAShardKey(t *testing.T) {
	all, err := Migrations()
	if err != nil {
		t.Fatal(err)
	}
	tables := 0
	for _, m := range all {
		for _, stmt := range m.Statements {
			out, err := clusterDDL(stmt, "c", "db", m.Version)
			if err != nil {
				t.Errorf("%s: %v", m.Name, err)
				continue
			}
			for _, s := range out {
				if strings.HasPrefix(s, "CREATE") && !strings.Contains(s, " ON CLUSTER `c`") {
					t.Errorf("%s: %.80s… is not on the cluster", m.Name, s)
				}
				if strings.Contains(s, "ENGINE = Distributed") {
					tables++
				}
			}
		}
	}
	if tables < 14 {
		t.Fatalf("%d Distributed tables, want one a table", tables)
	}
}

// TestClusterForms checks each statement's cluster form.
func TestClusterForms(t *testing.T) {
	for _, c := range []struct {
		stmt string
		want []string
	}{
		{"CREATE TABLE IF NOT EXISTS snapshots (\n  store UInt8, id String\n) ENGINE = ReplacingMergeTree(crawled_at)\nPARTITION BY toYYYYMM(day)\nORDER BY (store, id)\nSETTINGS index_granularity = 256", []string{
			"CREATE TABLE IF NOT EXISTS `db`.`snapshots_local` ON CLUSTER `c` (\n  store UInt8, id String\n) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/edge/tables/{shard}/db/snapshots/v7', '{replica}', crawled_at)\nPARTITION BY toYYYYMM(day)\nORDER BY (store, id)\nSETTINGS index_granularity = 256",
			"CREATE TABLE IF NOT EXISTS `db`.`snapshots` ON CLUSTER `c` AS `db`.`snapshots_local` ENGINE = Distributed(`c`, `db`, `snapshots_local`, cityHash64(store, id))",
		}},
		{"CREATE TABLE IF NOT EXISTS access_log (at DateTime) ENGINE = MergeTree\nORDER BY at", []string{
			"CREATE TABLE IF NOT EXISTS `db`.`access_log_local` ON CLUSTER `c` (at DateTime) ENGINE = ReplicatedMergeTree('/clickhouse/edge/tables/{shard}/db/access_log/v7', '{replica}')\nORDER BY at",
			"CREATE TABLE IF NOT EXISTS `db`.`access_log` ON CLUSTER `c` AS `db`.`access_log_local` ENGINE = Distributed(`c`, `db`, `access_log_local`, cityHash64(kind, id))",
		}},
		{"CREATE MATERIALIZED VIEW IF NOT EXISTS usage_log_totals TO usage AS\nSELECT day, subject, calls FROM usage_log", []string{
			"CREATE MATERIALIZED VIEW IF NOT EXISTS `db`.`usage_log_totals` ON CLUSTER `c` TO `db`.`usage_local` AS SELECT day, subject, calls FROM `db`.`usage_log_local`",
		}},
		{"DROP TABLE IF EXISTS daily_ranks_days", []string{
			"DROP TABLE IF EXISTS `db`.`daily_ranks_days` ON CLUSTER `c`", "DROP TABLE IF EXISTS `db`.`daily_ranks_days_local` ON CLUSTER `c`",
		}},
		{"INSERT INTO series_daily SELECT * FROM snapshots", []string{"INSERT INTO series_daily SELECT * FROM snapshots"}},
		{"ALTER TABLE webhook_cursors ADD COLUMN epoch UInt64 DEFAULT 0", []string{
			"ALTER TABLE `db`.`webhook_cursors_local` ON CLUSTER `c` ADD COLUMN epoch UInt64 DEFAULT 0",
			"ALTER TABLE `db`.`webhook_cursors` ADD COLUMN epoch UInt64 DEFAULT 0",
		}},
	} {
		got, err := clusterDDL(c.stmt, "c", "db", 7)
		if err != nil || strings.Join(got, "\n;\n") != strings.Join(c.want, "\n;\n") {
			t.Errorf("%.40q:\n got %q %v\nwant %q", c.stmt, got, err, c.want)
		}
	}
	for _, bad := range []string{
		"CREATE TABLE IF NOT EXISTS nowhere (x UInt8) ENGINE = MergeTree ORDER BY x", // no shard key
		"CREATE TABLE IF NOT EXISTS usage (x UInt8) ENGINE = Memory",                 // no replicated form
		"ALTER TABLE usage DROP COLUMN y",                                            // no cluster form yet
	} {
		if _, err := clusterDDL(bad, "c", "db", 1); err == nil {
			t.Errorf("%q has a cluster form", bad)
		}
	}
}

// TestAddedColumn: Migrate finds the column a statement adds, in a
// server's form and a cluster's, to skip it where the column is there.
func TestAddedColumn(t *testing.T) {
	for _, c := range []struct{ stmt, table, column string }{
		{"ALTER TABLE webhook_cursors ADD COLUMN epoch UInt64 DEFAULT 0", "webhook_cursors", "epoch"},
		{"ALTER TABLE `db`.`webhook_cursors_local` ON CLUSTER `c` ADD COLUMN epoch UInt64 DEFAULT 0", "webhook_cursors_local", "epoch"},
		{"ALTER TABLE `db`.`webhook_cursors` ADD COLUMN epoch UInt64 DEFAULT 0", "webhook_cursors", "epoch"},
		{"ALTER TABLE usage DROP COLUMN y", "", ""},
		{"CREATE TABLE IF NOT EXISTS t (x UInt8) ENGINE = MergeTree ORDER BY x", "", ""},
	} {
		table, column, ok := addedColumn(c.stmt)
		if table != c.table || column != c.column || ok != (c.table != "") {
			t.Errorf("%q: %q %q %v, want %q %q", c.stmt, table, column, ok, c.table, c.column)
		}
	}
}

// TestIfNotExists: a definition SHOW CREATE TABLE gives is made again
// only where missing; anything else is refused.
func TestIfNotExists(t *testing.T) {
	for _, c := range []struct{ def, want string }{
		{"CREATE TABLE db.t_local (x UInt8) ENGINE = ReplicatedMergeTree('/p/{shard}/t', '{replica}') ORDER BY x",
			"CREATE TABLE IF NOT EXISTS db.t_local (x UInt8) ENGINE = ReplicatedMergeTree('/p/{shard}/t', '{replica}') ORDER BY x"},
		{"CREATE MATERIALIZED VIEW db.v TO db.t_local (x UInt8) AS SELECT x FROM db.s_local",
			"CREATE MATERIALIZED VIEW IF NOT EXISTS db.v TO db.t_local (x UInt8) AS SELECT x FROM db.s_local"},
		{"DROP TABLE db.t", ""},
	} {
		got, err := ifNotExists(c.def)
		if got != c.want || (err != nil) != (c.want == "") {
			t.Errorf("%q: %q %v, want %q", c.def, got, err, c.want)
		}
	}
	if makeOrder("ReplicatedMergeTree") >= makeOrder("Distributed") || makeOrder("Distributed") >= makeOrder("MaterializedView") {
		t.Error("tables are not made before the Distributed tables over them, and those before the views writing into them")
	}
}
