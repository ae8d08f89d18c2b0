package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
)

// CategoryDay is a category's ranked listings on a day (live, with a size
// in the rank lookback) and the sum of their sizes, as the ranks job
// counts them.
type CategoryDay struct {
	Day       string `json:"day"` // yyyy-MM-dd (UTC)
	Listings  int64  `json:"listings"`
	TotalSize int64  `json:"totalSize"`
}

// LoadCategoryWeeks reads category's totals in store week by week from
// from to last: each Sunday's (an ISO week's last day) and last's, oldest
// first, on the days the ranks job has ranked.
func LoadCategoryWeeks(ctx context.Context, conn driver.Conn, store views.Store, category string, from, last views.Day) ([]CategoryDay, error) {
	rows, err := conn.Query(ctx, `
		SELECT day, argMax(listings, version), argMax(total_size, version) FROM daily_categories
		WHERE store = ? AND category = ? AND day >= toDate(?) AND day <= toDate(?)
			AND (toDayOfWeek(day) = 7 OR day = toDate(?))
		GROUP BY day ORDER BY day`,
		uint8(store), category, from.String(), last.String(), last.String())
	if err != nil {
		return nil, fmt.Errorf("load category weeks: %w", err)
	}
	defer rows.Close()
	out := []CategoryDay{}
	for rows.Next() {
		var (
			day   time.Time
			n     uint32
			total uint64
		)
		if err := rows.Scan(&day, &n, &total); err != nil {
			return nil, fmt.Errorf("load category weeks: %w", err)
		}
		out = append(out, CategoryDay{Day: day.UTC().Format(time.DateOnly), Listings: int64(n), TotalSize: int64(total)})
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load category weeks: %w", err)
	}
	return out, nil
}
