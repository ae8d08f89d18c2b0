package analytics

import (
	"context"
	"fmt"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
)

// currentStateQuery reads every listing's newest metadata version joined
// with its newest reading. FINAL makes both exact whatever the state of
// background merges; snapshots_latest is small (one row per listing once
// merged), so no history is scanned.
const currentStateQuery = `
SELECT store, id, slug, name, developer, category, kind, description, icon, version,
       store_updated, store_created, first_seen, delisted_at, featured, manifest_version,
       permissions, host_access, access_level, topics,
       has_reading, read_at, usage, weekly_downloads, rating, rating_count, stars
FROM (
    SELECT store, id, slug, name, developer, category, kind, description, icon, version,
           store_updated, store_created, first_seen, delisted_at, featured, manifest_version,
           permissions, host_access, access_level, topics
    FROM listings FINAL
) ANY LEFT JOIN (
    SELECT store, id, toUInt8(1) AS has_reading, crawled_at AS read_at, usage, weekly_downloads,
           rating, rating_count, stars
    FROM snapshots_latest FINAL
) USING (store, id)`

// StreamListings reads the current state of every listing and calls fn with
// each, in no particular order. Strings shared between listings (category,
// developer, permissions, hosts, topics) are interned through in. fn must not
// keep the pointer it is given; it may copy the value.
func StreamListings(ctx context.Context, conn driver.Conn, in *views.Interner, fn func(*views.Listing) error) error {
	rows, err := conn.Query(ctx, currentStateQuery)
	if err != nil {
		return fmt.Errorf("query listings: %w", err)
	}
	defer rows.Close()
	var (
		store, kind, featured, manifest, access, hasReading uint8
		id, name, developer, category, description          string
		icon, version                                       string
		slug                                                *string
		updated, created, delisted                          *time.Time
		firstSeen, readAt                                   time.Time
		permissions, hosts, topics                          []string
		usage, weekly, ratingCount                          *uint64
		rating                                              *float64
		stars                                               []uint32
		l                                                   views.Listing
	)
	for rows.Next() {
		if err := rows.Scan(&store, &id, &slug, &name, &developer, &category, &kind, &description,
			&icon, &version, &updated, &created, &firstSeen, &delisted, &featured, &manifest,
			&permissions, &hosts, &access, &topics,
			&hasReading, &readAt, &usage, &weekly, &rating, &ratingCount, &stars); err != nil {
			return fmt.Errorf("scan listing: %w", err)
		}
		l = views.Listing{
			Store:           views.Store(store),
			ID:              id,
			Name:            name,
			Developer:       in.String(developer),
			Category:        in.String(category),
			Kind:            views.Kind(kind),
			Description:     truncateRunes(description, views.DescriptionLimit),
			Icon:            icon,
			Version:         version,
			Updated:         dayOf(updated),
			Created:         dayOf(created),
			FirstSeen:       firstSeen.Unix(),
			Featured:        featured != 0,
			ManifestVersion: manifest,
			Permissions:     in.Strings(permissions),
			HostAccess:      in.Strings(hosts),
			AccessLevel:     access,
			Topics:          in.Strings(topics),
		}
		if slug != nil {
			l.Slug = *slug
		}
		if delisted != nil {
			l.Delisted = delisted.Unix()
		}
		if hasReading != 0 {
			l.ReadAt = readAt.Unix()
			l.SetUsage(optU64(usage))
			l.SetWeeklyDownloads(optU64(weekly))
			l.SetRatingCount(optU64(ratingCount))
			if rating != nil {
				l.SetRating(*rating, true)
			} else {
				l.SetRating(0, false)
			}
			if len(stars) == 5 {
				copy(l.Stars[:], stars)
				l.HasStars = true
			}
		} else {
			l.SetUsage(0, false)
			l.SetWeeklyDownloads(0, false)
			l.SetRatingCount(0, false)
			l.SetRating(0, false)
		}
		// The scanner reuses slices it is handed: give it fresh ones.
		permissions, hosts, topics, stars = nil, nil, nil, nil
		if err := fn(&l); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read listings: %w", err)
	}
	return nil
}

// LoadReplica streams the current state of every listing into a new
// replica with the given generation.
func LoadReplica(ctx context.Context, conn driver.Conn, generation uint64) (*views.Replica, error) {
	start := time.Now()
	var n uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM listings").Scan(&n); err != nil {
		return nil, fmt.Errorf("count listings: %w", err)
	}
	// Versions of a listing make count() an upper bound: a good capacity.
	all := make([]views.Listing, 0, n)
	in := views.NewInterner()
	err := StreamListings(ctx, conn, in, func(l *views.Listing) error {
		all = append(all, *l)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load replica: %w", err)
	}
	return views.NewReplica(all, views.ReplicaInfo{
		Generation: generation,
		LoadedAt:   time.Now().UTC(),
		LoadTime:   time.Since(start),
	}), nil
}

func dayOf(t *time.Time) views.Day {
	if t == nil {
		return views.NoDay
	}
	return views.DayOf(*t)
}

func optU64(v *uint64) (int64, bool) {
	if v == nil {
		return 0, false
	}
	return int64(*v), true
}

// truncateRunes returns the first n characters of s.
func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	count := 0
	for i := range s {
		if count == n {
			return s[:i]
		}
		count++
	}
	return s
}
