package analytics

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
)

// listingsQuery reads the newest metadata version of the selected
// listings, and readingsQuery their newest readings, both as of a state's
// bound (asOf: the newest crawled at or before it). FINAL makes both exact
// whatever the state of background merges; listings_latest and
// snapshots_latest are small (one row per listing once merged), so no
// history is scanned. The two are read apart and matched in the edge by
// key: ClickHouse 18.16's join of the two costs more than both reads
// together (a store of 2.2M listings: 2.2 s for the metadata, 0.3 s for
// the readings, 7.5 s joined). String lists come as one string each
// (joinedList), so that a list many listings repeat is one map lookup.
const listingsQuery = `
SELECT store, id, slug, name, developer, category, kind, description, icon, version,
       store_updated, store_created, first_seen, delisted_at, featured, manifest_version,
       ` + joinedPermissions + `, ` + joinedHosts + `, access_level, ` + joinedTopics + `, toUInt32(crawled_at)
FROM listings_latest FINAL WHERE (%s) AND toUInt32(crawled_at) <= %d`

const readingsQuery = `
SELECT store, id, crawled_at, usage, weekly_downloads, rating, rating_count, stars
FROM snapshots_latest FINAL WHERE (%s) AND toUInt32(crawled_at) <= %d`

// joined* serialise a list of strings as one: each element as its length
// in bytes, a colon, and its bytes (a netstring without the trailing
// comma), which any content survives. splitJoined reads it back.
const (
	joinedPermissions = "arrayStringConcat(arrayMap(x -> concat(toString(length(x)), ':', x), permissions))"
	joinedHosts       = "arrayStringConcat(arrayMap(x -> concat(toString(length(x)), ':', x), host_access))"
	joinedTopics      = "arrayStringConcat(arrayMap(x -> concat(toString(length(x)), ':', x), topics))"
)

// splitJoined returns the list that s serialises (see joinedPermissions).
func splitJoined(s string) ([]string, error) {
	var out []string
	for len(s) > 0 {
		colon := strings.IndexByte(s, ':')
		if colon <= 0 || colon > 9 {
			return nil, fmt.Errorf("list %.40q: no length before %q", s, s[:min(len(s), 10)])
		}
		n, err := strconv.Atoi(s[:colon])
		if err != nil || s[0] < '0' || s[0] > '9' || (s[0] == '0' && colon > 1) || n > len(s)-colon-1 {
			return nil, fmt.Errorf("list %.40q: bad length %q", s, s[:colon])
		}
		out = append(out, s[colon+1:colon+1+n])
		s = s[colon+1+n:]
	}
	return out, nil
}

// streamListings reads the metadata of the selected listings as of a and
// calls fn with each, in no particular order, with no reading (see
// addReadings). Strings shared between listings (category, developer,
// permissions, hosts, topics) are interned through in. fn must not keep
// the pointer it is given; it may copy the value.
func streamListings(ctx context.Context, conn driver.Conn, in *replica.Interner, sel selection, a asOf, fn func(*views.Listing) error) error {
	rows, err := conn.Query(ctx, a.listingsSQL(sel), sel.args...)
	if err != nil {
		return fmt.Errorf("query listings: %w", err)
	}
	defer rows.Close()
	var (
		store, kind, featured, manifest, access    uint8
		id, name, developer, category, description string
		icon, version, permissions, hosts, topics  string
		slug                                       *string
		updated, created, delisted                 *time.Time
		firstSeen                                  time.Time
		metaAt                                     uint32
		l                                          views.Listing
	)
	for rows.Next() {
		if err := rows.Scan(&store, &id, &slug, &name, &developer, &category, &kind, &description,
			&icon, &version, &updated, &created, &firstSeen, &delisted, &featured, &manifest,
			&permissions, &hosts, &access, &topics, &metaAt); err != nil {
			return fmt.Errorf("scan listing: %w", err)
		}
		l = views.Listing{
			Store:           views.Store(store),
			ID:              id,
			Name:            name,
			Developer:       in.String(developer),
			Category:        in.String(category),
			Kind:            views.Kind(kind),
			Description:     TruncateRunes(description, views.DescriptionLimit),
			Icon:            icon,
			Version:         version,
			Updated:         views.UpdatedAsRead(dayOf(updated), int64(metaAt)),
			Created:         dayOf(created),
			FirstSeen:       firstSeen.Unix(),
			MetaAt:          int64(metaAt),
			Featured:        featured != 0,
			ManifestVersion: manifest,
			AccessLevel:     access,
		}
		if l.Permissions, err = in.List(permissions, splitJoined); err == nil {
			if l.HostAccess, err = in.List(hosts, splitJoined); err == nil {
				l.Topics, err = in.List(topics, splitJoined)
			}
		}
		if err != nil {
			return fmt.Errorf("scan listing %s/%s: %w", l.Store, id, err)
		}
		if slug != nil {
			l.Slug = *slug
		}
		if delisted != nil {
			l.Delisted = delisted.Unix()
		}
		l.SetUsage(0, false)
		l.SetWeeklyDownloads(0, false)
		l.SetRatingCount(0, false)
		l.SetRating(0, false)
		if err := fn(&l); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read listings: %w", err)
	}
	return nil
}

// addReadings reads the newest reading as of a of the selected listings
// and sets it on each listing of b that has one.
func addReadings(ctx context.Context, conn driver.Conn, b *replica.Builder, sel selection, a asOf) error {
	rows, err := conn.Query(ctx, a.readingsSQL(sel), sel.args...)
	if err != nil {
		return fmt.Errorf("query readings: %w", err)
	}
	defer rows.Close()
	var (
		store                      uint8
		id                         string
		readAt                     time.Time
		usage, weekly, ratingCount *uint64
		rating                     *float64
		stars                      []uint32
	)
	for rows.Next() {
		if err := rows.Scan(&store, &id, &readAt, &usage, &weekly, &rating, &ratingCount, &stars); err != nil {
			return fmt.Errorf("scan reading: %w", err)
		}
		l := b.Find(views.Store(store), id)
		if l == nil {
			continue // a reading of a listing without metadata (yet): not served
		}
		l.ReadAt = readAt.Unix()
		l.SetUsage(optU64(usage))
		l.SetWeeklyDownloads(optU64(weekly))
		l.SetRatingCount(optU64(ratingCount))
		if rating != nil {
			l.SetRating(*rating, true)
		}
		if len(stars) == 5 {
			copy(l.Stars[:], stars)
			l.HasStars = true
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("read readings: %w", err)
	}
	return nil
}

// ReplicaOptions choose what LoadReplica reads.
type ReplicaOptions struct {
	Generation uint64 // of the new replica
	History    bool   // also load growth bases, climb bases and sparklines
	// PartSize is how many listings one read covers (DefaultPartSize when
	// 0): each read's memory inside ClickHouse grows with it, not with the
	// number of listings.
	PartSize int
	// Share, when set, is the replica being replaced: a listing's strings
	// equal to its old ones are taken from it, so that the two replicas
	// share them and the copies just read are garbage at once.
	Share *replica.Replica
	// Progress, when set, is called after each part with the number of
	// parts read and their total.
	Progress func(done, total int)
	// Counted, when set, is called with the number of listings once they
	// are counted, before the first part is read.
	Counted func(listings int)
	// ReadFrom, when set, is told where the next refresh of the replica
	// reads from (RefreshReplicaFrom): the load's bound (asOf).
	ReadFrom func(Watermarks)
}

// LoadReplica reads the current state of every listing into a new replica,
// with their history if asked, one part at a time (SplitParts), every part
// as of one bound (asOf): the watermarks read when the load begins. The
// replica's listings watermark is that bound, its readings watermark the
// newest reading it holds.
func LoadReplica(ctx context.Context, conn driver.Conn, o ReplicaOptions) (*replica.Replica, error) {
	start := time.Now()
	wm, err := ReadWatermarks(ctx, conn)
	if err != nil {
		return nil, err
	}
	bound := upTo(wm)
	parts, n, err := splitParts(ctx, conn, o.PartSize)
	if err != nil {
		return nil, err
	}
	if o.Counted != nil {
		o.Counted(n)
	}
	// The exact count: listings arriving during the load (the next
	// refresh's) may make the array grow once.
	b := replica.NewBuilder(n)
	if o.Share != nil {
		b.ShareText(o.Share) // unchanged text, and its index, are not copied again
	}
	info := replica.NewInfo(wm.Listings, wm.Readings)
	info.Generation, info.HasHistory = o.Generation, o.History
	// Each worker keeps its interner and its part's builder, with room for
	// a part, from part to part (AddPart empties it for the next).
	interners := make([]*replica.Interner, loadWorkers)
	builders := make([]*replica.Builder, loadWorkers)
	partSize := o.PartSize
	if partSize <= 0 {
		partSize = DefaultPartSize
	}
	for w := range interners {
		interners[w] = replica.NewInterner()
		builders[w] = replica.NewBuilder(min(n, partSize+partSize/4))
	}
	err = inOrder(ctx, len(parts), loadWorkers, func(ctx context.Context, i, w int) (*replica.Builder, error) {
		pb := builders[w]
		if err := load(ctx, conn, pb, interners[w], selectPart(parts[i]), info, o.Share, bound); err != nil {
			return nil, fmt.Errorf("load part %s: %w", parts[i], err)
		}
		return pb, nil
	}, func(i int, pb *replica.Builder) error {
		if err := b.AddPart(pb); err != nil {
			return fmt.Errorf("load part %s: %w", parts[i], err)
		}
		if o.Progress != nil {
			o.Progress(i+1, len(parts))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// The listings crawled after the bound while the parts were read: as
	// of the bound, from every crawl.
	if _, err := fixUp(ctx, conn, b, bound, info, o.Share); err != nil {
		return nil, err
	}
	info.ReadingsMark = readingsMark(bound, b)
	if o.ReadFrom != nil {
		o.ReadFrom(wm)
	}
	info.LoadedAt, info.LoadTime = time.Now().UTC(), time.Since(start)
	return b.Build(info), nil
}

// RefreshReplica returns a new replica: old with every listing whose metadata
// or newest reading changed since old was loaded read again, with its
// history, and how many were. Its cost follows the number of changed
// listings plus one copy of old's (none when nothing changed: old itself
// comes back); the climb reference time stays old's until the next full
// load.
func RefreshReplica(ctx context.Context, conn driver.Conn, old *replica.Replica, generation uint64) (*replica.Replica, int, error) {
	prev := old.Info()
	r, n, _, err := RefreshReplicaFrom(ctx, conn, old, generation, Watermarks{Listings: prev.ListingsMark, Readings: prev.ReadingsMark})
	return r, n, err
}

// RefreshReplicaFrom is RefreshReplica reading the listings crawled after
// since (the bound of the read that gave old: ReplicaOptions.ReadFrom),
// each as of one bound read when the refresh begins (asOf), from every
// crawl: old's listings were read as of since, the new replica's are as of
// that bound, whatever was inserted while it read. It also returns where
// the next refresh reads from (the bound). A listing read again that did
// not change is left as old has it. The new replica's readings watermark
// is its newest reading, never before old's.
func RefreshReplicaFrom(ctx context.Context, conn driver.Conn, old *replica.Replica, generation uint64, since Watermarks) (*replica.Replica, int, Watermarks, error) {
	start := time.Now()
	prev := old.Info()
	wm, err := ReadWatermarks(ctx, conn)
	if err != nil {
		return nil, 0, since, err
	}
	bound := upTo(wm).inWhole()
	read := replica.NewBuilder(0)
	info := prev
	info.Generation, info.ListingsMark = generation, maxTime(prev.ListingsMark, wm.Listings)
	if err := load(ctx, conn, read, replica.NewInterner(), changedSince(since), info, old, bound); err != nil {
		return nil, 0, since, err
	}
	b := changedOnly(read.Build(info), old)
	n := b.Len()
	if n == 0 {
		return old, 0, wm, nil // nothing changed: no copy of every listing
	}
	info.ReadingsMark = maxTime(prev.ReadingsMark, readingsMark(bound, b))
	info.LoadedAt, info.LoadTime = time.Now().UTC(), time.Since(start)
	return replica.Merge(old, b, info), n, wm, nil
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// AddHistory loads the history (growth bases, climb bases, sparklines) of
// every listing in b, as of the replica described by info, one part at a
// time (SplitParts with partSize): as of info's watermarks, the bound b
// was read as of (LoadReplica), so that a crawl inserted since changes
// nothing; the listings crawled after that bound are read again, as of it,
// from every crawl (fixUp).
func AddHistory(ctx context.Context, conn driver.Conn, b *replica.Builder, info replica.Info, partSize int) error {
	info.HasHistory = true
	bound := upTo(Watermarks{Listings: info.ListingsMark, Readings: info.ReadingsMark})
	parts, err := SplitParts(ctx, conn, partSize)
	if err != nil {
		return err
	}
	// Each part fills its own range of b, so parts load at once.
	ranges := make([]*replica.Builder, len(parts))
	for i, p := range parts {
		ranges[i] = b.Range(p.Store, p.From, p.To)
	}
	err = inOrder(ctx, len(parts), loadWorkers, func(ctx context.Context, i, _ int) (struct{}, error) {
		if err := loadHistory(ctx, conn, ranges[i], selectPart(parts[i]), info, bound); err != nil {
			return struct{}{}, fmt.Errorf("history of part %s: %w", parts[i], err)
		}
		return struct{}{}, nil
	}, func(int, struct{}) error { return nil })
	if err != nil {
		return err
	}
	if err := loadHistory(ctx, conn, b, changedSince(bound.marks()), info, bound.inWhole()); err != nil {
		return fmt.Errorf("history of the listings crawled since: %w", err)
	}
	return nil
}

// load reads the selected listings into b as of a, with history when
// info.HasHistory, sharing strings with old when it is set.
func load(ctx context.Context, conn driver.Conn, b *replica.Builder, in *replica.Interner, sel selection,
	info replica.Info, old *replica.Replica, a asOf) error {
	err := streamListings(ctx, conn, in, sel, a, func(l *views.Listing) error {
		if old != nil {
			if o := old.Lookup(l.Store, l.ID); o != nil {
				l.ShareStrings(o)
			}
		}
		b.Add(l)
		return nil
	})
	if err != nil {
		return fmt.Errorf("load listings: %w", err)
	}
	if err := addReadings(ctx, conn, b, sel, a); err != nil {
		return fmt.Errorf("load listings: %w", err)
	}
	if !info.HasHistory {
		return nil
	}
	return loadHistory(ctx, conn, b, sel, info, a)
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

// TruncateRunes returns the first n characters of s (a description as
// the replica keeps it).
func TruncateRunes(s string, n int) string {
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
