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

// writePermissionCounts writes how many live chrome and edge listings
// asked for each permission on day: each listing by its newest metadata
// read by the day's end, not delisted by then.
func writePermissionCounts(ctx context.Context, conn driver.Conn, day time.Time, version uint64) error {
	end := day.UTC().Add(24 * time.Hour).Unix()
	rows, err := conn.Query(ctx, `
		SELECT store, permission, toUInt32(count()) FROM (
			SELECT store, id, argMax(permissions, crawled_at) AS perms, argMax(delisted_at, crawled_at) AS gone
			FROM listings
			WHERE store IN (?, ?) AND toUInt32(crawled_at) < ?
			GROUP BY store, id)
		ARRAY JOIN perms AS permission
		WHERE isNull(gone) OR toUInt32(assumeNotNull(gone)) >= ?
		GROUP BY store, permission`, uint8(views.Chrome), uint8(views.Edge), end, end)
	if err != nil {
		return fmt.Errorf("permission counts: %w", err)
	}
	type count struct {
		store      uint8
		permission string
		n          uint32
	}
	var counts []count
	for rows.Next() {
		var c count
		if err := rows.Scan(&c.store, &c.permission, &c.n); err != nil {
			rows.Close()
			return fmt.Errorf("permission counts: %w", err)
		}
		counts = append(counts, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("permission counts: %w", err)
	}
	if len(counts) == 0 {
		return nil
	}
	b, err := conn.PrepareBatch(ctx, "INSERT INTO daily_permissions (store, permission, day, listings, version)")
	if err != nil {
		return fmt.Errorf("permission counts: %w", err)
	}
	defer b.Close()
	for _, c := range counts {
		if err := b.Append(c.store, c.permission, day.UTC(), c.n, version); err != nil {
			return fmt.Errorf("permission counts: %w", err)
		}
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("permission counts: %w", err)
	}
	return nil
}

// LoadPermissionCounts returns how many live chrome and edge listings
// asked for each permission on day, as the ranks job counted them; none
// when it has not counted that day.
func LoadPermissionCounts(ctx context.Context, conn driver.Conn, day views.Day) (map[string]int, error) {
	rows, err := conn.Query(ctx, `
		SELECT permission, toUInt64(sum(n)) FROM (
			SELECT permission, store, argMax(listings, version) AS n FROM daily_permissions
			WHERE day = toDate(?) GROUP BY permission, store)
		GROUP BY permission`, day.String())
	if err != nil {
		return nil, fmt.Errorf("load permission counts: %w", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			p string
			n uint64
		)
		if err := rows.Scan(&p, &n); err != nil {
			return nil, fmt.Errorf("load permission counts: %w", err)
		}
		out[p] = int(n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load permission counts: %w", err)
	}
	return out, nil
}
