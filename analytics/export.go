package analytics

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
)

// ExportReading is one reading of a listing in a daily export.
type ExportReading struct {
	At              time.Time
	Usage           *uint64
	WeeklyDownloads *uint64
	Rating          *float64
	RatingCount     *uint64
}

// ExportRow is a listing's state at the end of a UTC day, and the day's
// readings: its newest metadata version crawled before the day's end,
// its latest reading in the week up to the day's end (Latest, nil when
// none), and the readings taken that day (oldest first).
type ExportRow struct {
	Store      views.Store
	ID         string
	Slug       *string
	Name       string
	Developer  string
	Category   string
	Kind       views.Kind
	Version    string
	Updated    *time.Time
	Created    *time.Time
	FirstSeen  time.Time
	DelistedAt *time.Time
	MetadataAt time.Time
	Latest     *ExportReading
	Readings   []ExportReading
}

// exportLookback is how far before a day's start an export looks for a
// listing's latest reading: the week of series.Lookback.
const exportLookback = 7 * 24 * time.Hour

// ExportPartSize is how many listings one pair of an export's reads
// covers: each sorts its part's rows before the first comes back, which
// ClickHouse must send within the connection's read timeout (30 s) on a
// busy server; a whole store of 2.5 M listings (googleplay at 5M) took
// longer.
const ExportPartSize = 50_000

// StreamExportRows calls fn with each listing of store s known by the end
// of UTC day d, in id order, with its state then and the day's readings.
// For each part of the store's listings (StoreParts), it reads the
// metadata versions crawled before the day's end and the readings of the
// eight days up to it, both sorted by id, and merges them: no join inside
// ClickHouse, and memory for one listing at a time. fn must not keep the
// row it is given. Nullable columns are taken from the newest version,
// NULL included (latestNullable).
func StreamExportRows(ctx context.Context, conn driver.Conn, s views.Store, d views.Day, fn func(*ExportRow) error) error {
	parts, err := StoreParts(ctx, conn, s, ExportPartSize)
	if err != nil {
		return fmt.Errorf("export listings of %s: %w", s, err)
	}
	if len(parts) == 0 {
		parts = []Part{{Store: s}}
	}
	for _, p := range parts {
		if err := streamExportPart(ctx, conn, p, d, fn); err != nil {
			return err
		}
	}
	return nil
}

func streamExportPart(ctx context.Context, conn driver.Conn, p Part, d views.Day, fn func(*ExportRow) error) error {
	s := p.Store
	end := (d + 1).Time()
	where, args := p.where()
	meta, err := conn.Query(ctx, `
		SELECT id, `+latestNullable("slug", "crawled_at")+`,
			argMax(name, crawled_at), argMax(developer, crawled_at),
			argMax(category, crawled_at), argMax(kind, crawled_at), argMax(version, crawled_at),
			`+latestNullable("store_updated", "crawled_at")+`, `+latestNullable("store_created", "crawled_at")+`,
			argMax(first_seen, crawled_at), `+latestNullable("delisted_at", "crawled_at")+`, max(crawled_at)
		FROM listings WHERE `+where+` AND crawled_at < ?
		GROUP BY id ORDER BY id`, append(slices.Clip(args), end)...)
	if err != nil {
		return fmt.Errorf("export listings of %s: %w", s, err)
	}
	defer meta.Close()
	reads, err := exportReadings(ctx, conn, where, args, d)
	if err != nil {
		return fmt.Errorf("export readings of %s: %w", s, err)
	}
	defer reads.Close()

	// The next reading not yet matched to a listing.
	var (
		rid     string
		r       ExportReading
		pending bool
	)
	next := func() error {
		pending = false
		if !reads.Next() {
			return reads.Err()
		}
		r = ExportReading{}
		if err := reads.Scan(&rid, &r.At, &r.Usage, &r.WeeklyDownloads, &r.Rating, &r.RatingCount); err != nil {
			return err
		}
		r.At = r.At.UTC()
		pending = true
		return nil
	}
	if err := next(); err != nil {
		return fmt.Errorf("export readings of %s: %w", s, err)
	}
	var row ExportRow
	for meta.Next() {
		var kind uint8
		row = ExportRow{Store: s, Readings: row.Readings[:0]}
		if err := meta.Scan(&row.ID, &row.Slug, &row.Name, &row.Developer, &row.Category, &kind, &row.Version,
			&row.Updated, &row.Created, &row.FirstSeen, &row.DelistedAt, &row.MetadataAt); err != nil {
			return fmt.Errorf("export listings of %s: %w", s, err)
		}
		row.Kind, row.FirstSeen, row.MetadataAt = views.Kind(kind), row.FirstSeen.UTC(), row.MetadataAt.UTC()
		// Readings of listings before this one have no metadata by the
		// day's end: skip them.
		for pending && rid < row.ID {
			if err := next(); err != nil {
				return fmt.Errorf("export readings of %s: %w", s, err)
			}
		}
		for pending && rid == row.ID {
			latest := r
			row.Latest = &latest
			if !r.At.Before(d.Time()) {
				row.Readings = append(row.Readings, r)
			}
			if err := next(); err != nil {
				return fmt.Errorf("export readings of %s: %w", s, err)
			}
		}
		if err := fn(&row); err != nil {
			return err
		}
	}
	if err := meta.Err(); err != nil {
		return fmt.Errorf("export listings of %s: %w", s, err)
	}
	return nil
}

// FirstReadingDay returns the UTC day of the oldest stored reading: no day
// before it has anything to export.
func FirstReadingDay(ctx context.Context, conn driver.Conn) (views.Day, error) {
	var t time.Time
	if err := conn.QueryRow(ctx, `SELECT min(crawled_at) FROM snapshots`).Scan(&t); err != nil {
		return 0, fmt.Errorf("first reading: %w", err)
	}
	return views.DayOf(t), nil
}

// exportReadings reads the readings of the eight days up to day d's end
// of the listings where selects, by id then time.
func exportReadings(ctx context.Context, conn driver.Conn, where string, args []any, d views.Day) (driver.Rows, error) {
	return conn.Query(ctx, `
		SELECT id, crawled_at, usage, weekly_downloads, rating, rating_count FROM snapshots
		WHERE `+where+` AND crawled_at >= ? AND crawled_at < ?
		ORDER BY id, crawled_at`, append(slices.Clip(args), d.Time().Add(-exportLookback), (d+1).Time())...)
}
