package analytics

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// On a cluster (Config.Cluster), every table of the schema is two: a
// replicated local table on every server, named <table>_local, holding
// its shard's rows, and a Distributed table under the table's own name,
// through which the edge reads and writes. Rows are sharded by a hash of
// their key (shardKeys), so that a listing's whole history, and every row
// a ReplacingMergeTree or SummingMergeTree must merge, lives on one
// shard; queries that join or aggregate per listing then run on each
// shard alone (distributed_product_mode = 'local'). Materialized views
// are per shard: each server's view reads its local source and writes
// its local target. ZooKeeper coordinates the replicas and carries the
// DDL (ON CLUSTER).

// localSuffix names a Distributed table's local table.
const localSuffix = "_local"

// shardKeys is the sharding expression of each table of the schema: a
// hash of what its rows are merged or read together by. A table missing
// here makes Migrate fail on a cluster (TestEveryTableHasAShardKey).
var shardKeys = map[string]string{
	"listings":           "cityHash64(store, id)",
	"snapshots":          "cityHash64(store, id)",
	"reviews":            "cityHash64(store, listing_id)",
	"listings_latest":    "cityHash64(store, id)",
	"snapshots_latest":   "cityHash64(store, id)",
	"snapshots_daily":    "cityHash64(store, id)",
	"series_daily":       "cityHash64(store, id)",
	"daily_ranks":        "cityHash64(store, id)",
	"daily_ranks_days":   "cityHash64(day)",
	"daily_categories":   "cityHash64(store, category)",
	"daily_permissions":  "cityHash64(permission)",
	"accounts":           "cityHash64(email)",
	"api_keys":           "cityHash64(key_id)",
	"usage":              "cityHash64(day, subject)",
	"usage_log":          "cityHash64(day, subject)",
	"attempts_log":       "cityHash64(day, subject)",
	"access_log":         "cityHash64(kind, id)",
	"schema_migrations":  "cityHash64(version)",
	"editions":           "cityHash64(week)",
	"webhooks":           "cityHash64(id)",
	"webhook_cursors":    "cityHash64(id)",
	"webhook_deliveries": "cityHash64(id)",
}

var (
	createTableRE = regexp.MustCompile(`(?s)^CREATE TABLE IF NOT EXISTS (\w+) (\(.*\))\s*ENGINE = (\w+)(\(([^)]*)\))?(.*)$`)
	createViewRE  = regexp.MustCompile(`(?s)^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\s+(.*)$`)
	dropTableRE   = regexp.MustCompile(`^DROP TABLE IF EXISTS (\w+)$`)
	addColumnRE   = regexp.MustCompile(`(?s)^ALTER TABLE (\w+) (ADD COLUMN (\w+) .*)$`)
	insertRE      = regexp.MustCompile(`(?s)^INSERT INTO \w+`)
	fromRE        = regexp.MustCompile(`\bFROM (\w+)`)
)

// clusterDDL returns the statements that apply stmt, one statement of a
// migration written for a single server, to cluster's database db;
// version is the migration's, which names the tables' ZooKeeper paths so
// that a table dropped and created again by a later migration never
// meets its old replicas' metadata.
func clusterDDL(stmt, cluster, db string, version int) ([]string, error) {
	on := " ON CLUSTER " + quoteIdent(cluster)
	q := func(table string) string { return quoteIdent(db) + "." + quoteIdent(table) }
	switch {
	case createTableRE.MatchString(stmt):
		m := createTableRE.FindStringSubmatch(stmt)
		name, cols, engine, args, rest := m[1], m[2], m[3], m[5], m[6]
		key, ok := shardKeys[name]
		if !ok {
			return nil, fmt.Errorf("table %s has no shard key", name)
		}
		if !strings.HasSuffix(engine, "MergeTree") {
			return nil, fmt.Errorf("table %s: engine %s has no replicated form", name, engine)
		}
		path := fmt.Sprintf("'/clickhouse/edge/tables/{shard}/%s/%s/v%d'", db, name, version)
		replArgs := path + ", '{replica}'"
		if strings.TrimSpace(args) != "" {
			replArgs += ", " + args
		}
		local := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s %s ENGINE = Replicated%s(%s)%s", q(name+localSuffix), on, cols, engine, replArgs, rest)
		dist := fmt.Sprintf("CREATE TABLE IF NOT EXISTS %s%s AS %s ENGINE = Distributed(%s, %s, %s, %s)",
			q(name), on, q(name+localSuffix), quoteIdent(cluster), quoteIdent(db), quoteIdent(name+localSuffix), key)
		return []string{local, dist}, nil
	case createViewRE.MatchString(stmt):
		m := createViewRE.FindStringSubmatch(stmt)
		sel := fromRE.ReplaceAllStringFunc(m[3], func(from string) string {
			return "FROM " + q(strings.TrimPrefix(from, "FROM ")+localSuffix)
		})
		return []string{fmt.Sprintf("CREATE MATERIALIZED VIEW IF NOT EXISTS %s%s TO %s AS %s", q(m[1]), on, q(m[2]+localSuffix), sel)}, nil
	case dropTableRE.MatchString(stmt):
		name := dropTableRE.FindStringSubmatch(stmt)[1]
		return []string{"DROP TABLE IF EXISTS " + q(name) + on, "DROP TABLE IF EXISTS " + q(name+localSuffix) + on}, nil
	case addColumnRE.MatchString(stmt):
		// The local tables first: the Distributed table's column is
		// written through to theirs. A replicated table's ALTER is itself
		// replicated: distributed DDL runs it on one replica a shard. The
		// Distributed table's is refused as distributed DDL (18.16: "isn't
		// replicated, but shard is replicated according to its cluster
		// definition"), so it has no ON CLUSTER: Migrate runs it on every
		// server of the cluster (onEveryServer).
		m := addColumnRE.FindStringSubmatch(stmt)
		return []string{"ALTER TABLE " + q(m[1]+localSuffix) + on + " " + m[2], "ALTER TABLE " + q(m[1]) + " " + m[2]}, nil
	case insertRE.MatchString(stmt):
		return []string{stmt}, nil // through the Distributed tables
	}
	return nil, fmt.Errorf("no cluster form for statement %.60q", stmt)
}

// latestNullable returns SQL for the value of Nullable column col in the
// row with the largest by, NULL included (argMax of a Nullable skips
// NULLs: a listing delisted and back would keep its old delisting). It
// takes the value through a tuple of its null flag and the value, never
// a tuple holding a Nullable: ClickHouse 18.16 sends the state of
// argMax(Tuple(Nullable(T))) from a shard to a Distributed table's
// initiator wrongly: garbage for a NULL, a crash for a String
// (TestSchemaAndLoadsOnACluster, TestClusterAnswersAsOneServer).
func latestNullable(col, by string) string {
	t := fmt.Sprintf("argMax(tuple(isNull(%s), assumeNotNull(%s)), %s)", col, col, by)
	return fmt.Sprintf("if(%s.1 = 1, NULL, %s.2)", t, t)
}

// clusterOf returns the cluster a table of the current database is
// distributed over, or "" when it is a table of one server: what a
// statement that Distributed tables do not take (TRUNCATE, DROP
// PARTITION) needs to reach the table's local tables on every server.
func clusterOf(ctx context.Context, conn driver.Conn, table string) (string, error) {
	var engine string
	err := conn.QueryRow(ctx, `SELECT engine_full FROM system.tables WHERE database = currentDatabase() AND name = ?`, table).Scan(&engine)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("table %s is missing from the database: run edge migrate (make run does) to bring its schema up to date", table)
	}
	if err != nil {
		return "", fmt.Errorf("engine of %s: %w", table, err)
	}
	args, ok := strings.CutPrefix(engine, "Distributed(")
	if !ok {
		return "", nil
	}
	name, _, _ := strings.Cut(args, ",")
	return strings.Trim(strings.TrimSpace(name), "'`"), nil
}

// onTable returns the target of a statement that Distributed tables do
// not take: table itself on one server, or its local tables on every
// server of its cluster.
func onTable(ctx context.Context, conn driver.Conn, table string) (string, error) {
	cluster, err := clusterOf(ctx, conn, table)
	if err != nil || cluster == "" {
		return table, err
	}
	return table + localSuffix + " ON CLUSTER " + quoteIdent(cluster), nil
}
