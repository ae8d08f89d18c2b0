package analytics

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// UpstreamTables are the tables the crawler writes, followed by the tables
// ClickHouse derives from them.
var UpstreamTables = []string{"listings", "snapshots", "reviews", "listings_latest", "snapshots_latest", "snapshots_daily"}

// TableCounts returns the number of rows in each upstream table.
func TableCounts(ctx context.Context, conn driver.Conn) (map[string]uint64, error) {
	out := make(map[string]uint64, len(UpstreamTables))
	for _, t := range UpstreamTables {
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
	err := conn.QueryRow(ctx, `SELECT (SELECT count() FROM listings) + (SELECT count() FROM snapshots)
		+ (SELECT count() FROM reviews)`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("check for existing data: %w", err)
	}
	return n == 0, nil
}

// Reset removes every row of the upstream tables and their derived tables.
func Reset(ctx context.Context, conn driver.Conn) error {
	for _, t := range UpstreamTables {
		if err := conn.Exec(ctx, "TRUNCATE TABLE "+t); err != nil {
			return fmt.Errorf("truncate %s: %w", t, err)
		}
	}
	return nil
}
