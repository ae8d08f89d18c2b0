package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// StoreEdition keeps the built edition of week (its JSON, body) in format
// version, for every edge of the fleet.
func StoreEdition(ctx context.Context, conn driver.Conn, week string, version uint32, body []byte) error {
	return sendBatch(ctx, conn, "INSERT INTO editions (week, version, built_at, body)", "editions", func(b driver.Batch) error {
		return b.Append(week, version, time.Now().UTC(), string(body))
	})
}

// LoadEditions returns the kept editions of format version, by week: each
// week's newest.
func LoadEditions(ctx context.Context, conn driver.Conn, version uint32) (map[string][]byte, error) {
	rows, err := conn.Query(ctx, `SELECT week, argMax(body, built_at) FROM editions WHERE version = ? GROUP BY week`, version)
	if err != nil {
		return nil, fmt.Errorf("load editions: %w", err)
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var week, body string
		if err := rows.Scan(&week, &body); err != nil {
			return nil, fmt.Errorf("load editions: %w", err)
		}
		out[week] = []byte(body)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load editions: %w", err)
	}
	return out, nil
}
