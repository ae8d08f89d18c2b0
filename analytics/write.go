package analytics

import (
	"context"
	"fmt"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// The batch inserts name their columns: ClickHouse 18.16 rejects a native
// batch without them.
const (
	insertListings = `INSERT INTO listings (store, id, crawled_at, slug, name, developer, category, kind,
		description, icon, version, store_updated, store_created, first_seen, delisted_at, featured,
		manifest_version, permissions, host_access, access_level, topics)`
	insertSnapshots = `INSERT INTO snapshots (store, id, crawled_at, usage, weekly_downloads, rating,
		rating_count, stars)`
	insertReviews = `INSERT INTO reviews (store, listing_id, review_id, posted_at, stars, author, lang,
		text, crawled_at)`
)

// WriteListings inserts rows into the listings table in one batch.
func WriteListings(ctx context.Context, conn driver.Conn, rows []ListingRow) error {
	if len(rows) == 0 {
		return nil
	}
	return sendBatch(ctx, conn, insertListings, "listings", func(b driver.Batch) error {
		for i := range rows {
			r := &rows[i]
			if err := b.Append(uint8(r.Store), r.ID, r.CrawledAt, r.Slug, r.Name, r.Developer,
				r.Category, uint8(r.Kind), r.Description, r.Icon, r.Version, r.StoreUpdated,
				r.StoreCreated, r.FirstSeen, r.DelistedAt, boolByte(r.Featured), r.ManifestVersion,
				nonNil(r.Permissions), nonNil(r.HostAccess), r.AccessLevel, nonNil(r.Topics)); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteSnapshots inserts rows into the snapshots table in one batch.
func WriteSnapshots(ctx context.Context, conn driver.Conn, rows []SnapshotRow) error {
	if len(rows) == 0 {
		return nil
	}
	return sendBatch(ctx, conn, insertSnapshots, "snapshots", func(b driver.Batch) error {
		for i := range rows {
			r := &rows[i]
			stars := r.Stars
			if stars == nil {
				stars = []uint32{}
			}
			if err := b.Append(uint8(r.Store), r.ID, r.CrawledAt, r.Usage, r.WeeklyDownloads,
				r.Rating, r.RatingCount, stars); err != nil {
				return err
			}
		}
		return nil
	})
}

// WriteReviews inserts rows into the reviews table in one batch.
func WriteReviews(ctx context.Context, conn driver.Conn, rows []ReviewRow) error {
	if len(rows) == 0 {
		return nil
	}
	return sendBatch(ctx, conn, insertReviews, "reviews", func(b driver.Batch) error {
		for i := range rows {
			r := &rows[i]
			if err := b.Append(uint8(r.Store), r.ListingID, r.ReviewID, r.PostedAt, r.Stars,
				r.Author, r.Lang, r.Text, r.CrawledAt); err != nil {
				return err
			}
		}
		return nil
	})
}

func sendBatch(ctx context.Context, conn driver.Conn, query, table string, fill func(driver.Batch) error) error {
	b, err := conn.PrepareBatch(ctx, query)
	if err != nil {
		return fmt.Errorf("prepare %s batch: %w", table, err)
	}
	defer b.Close()
	if err := fill(b); err != nil {
		return fmt.Errorf("append to %s batch: %w", table, err)
	}
	if err := b.Send(); err != nil {
		return fmt.Errorf("send %s batch: %w", table, err)
	}
	return nil
}

func boolByte(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
