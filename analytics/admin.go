package analytics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// UpstreamTables are the tables the crawler writes, followed by the tables
// ClickHouse derives from them.
var UpstreamTables = []string{"listings", "snapshots", "reviews", "listings_latest", "snapshots_latest", "snapshots_daily"}

// rawTables are the tables the crawler writes, whose rows are never
// replaced or summed by a merge.
var rawTables = []string{"listings", "snapshots", "reviews"}

// derivedTables are the tables the edge derives from the upstream ones
// (the daily series for reads of a few listings, the daily ranks).
var derivedTables = []string{"series_daily", "daily_ranks", "daily_ranks_days", "daily_categories", "daily_permissions"}

// TableCounts returns the number of rows in the tables the crawler writes
// (listings, snapshots, reviews). The derived tables are not counted:
// how many rows they hold depends on how far their parts are merged,
// which differs between releases and over time.
func TableCounts(ctx context.Context, conn driver.Conn) (map[string]uint64, error) {
	out := make(map[string]uint64, len(rawTables))
	for _, t := range rawTables {
		var n uint64
		if err := conn.QueryRow(ctx, "SELECT count() FROM "+t).Scan(&n); err != nil {
			return nil, fmt.Errorf("count %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// IsEmpty reports whether the listings, snapshots and reviews tables hold
// no rows.
func IsEmpty(ctx context.Context, conn driver.Conn) (bool, error) {
	var n uint64
	// A sum of counts, not of scalar subqueries: those are Nullable on
	// current releases and plain on 18.16.
	err := conn.QueryRow(ctx, `SELECT sum(n) FROM (SELECT count() AS n FROM listings
		UNION ALL SELECT count() AS n FROM snapshots UNION ALL SELECT count() AS n FROM reviews)`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("check for existing data: %w", err)
	}
	return n == 0, nil
}

// Reset removes every row of the upstream tables and of every table
// derived from them (the daily series and ranks too: a dataset seeded
// again must not meet the old one's).
func Reset(ctx context.Context, conn driver.Conn) error {
	for _, t := range append(slices.Clip(UpstreamTables), derivedTables...) {
		target, err := onTable(ctx, conn, t)
		if err != nil {
			return err
		}
		if err := truncate(ctx, conn, target, target != t); err != nil {
			return fmt.Errorf("truncate %s: %w", t, err)
		}
	}
	return nil
}

// truncate empties a table. On a cluster (onCluster) the statement runs
// on every server and needs each shard's leading replica. A replica that
// has just restarted still finds its own previous election node first
// until ZooKeeper expires that node's session, and refuses ("Leader was
// suddenly changed"); so the statement is tried again, a second apart,
// for up to truncateRetry, which outlasts ZooKeeper's longest session. A
// TRUNCATE done twice is done once.
func truncate(ctx context.Context, conn driver.Conn, target string, onCluster bool) error {
	start := time.Now()
	for tries := 1; ; tries++ {
		err := conn.Exec(ctx, "TRUNCATE TABLE "+target)
		if err == nil || !onCluster {
			return err
		}
		if time.Since(start) > truncateRetry {
			return fmt.Errorf("%d tries in %s: %w", tries, time.Since(start).Round(time.Second), err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Second):
		}
	}
}

// truncateRetry bounds the retries of truncate: ZooKeeper's default
// largest session timeout (20 ticks of 2 s) and a margin.
const truncateRetry = 60 * time.Second
