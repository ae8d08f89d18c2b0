package analytics_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
)

// TestReplicaMatchesDatabase loads a seeded database and compares the
// replica with direct queries written independently of the loader: newest
// rows chosen with LIMIT 1 BY instead of FINAL.
func TestReplicaMatchesDatabase(t *testing.T) {
	o := seed.Options{Seed: 3, Listings: 1500, Days: 20, ReviewsPerListing: 1,
		End: time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC)}
	conn := seededDB(t, o)
	ctx := context.Background()
	r, err := analytics.LoadReplica(ctx, conn, analytics.ReplicaOptions{Generation: 7})
	if err != nil {
		t.Fatal(err)
	}
	if r.Info().Generation != 7 || r.Len() != o.Listings {
		t.Fatalf("generation %d, %d listings; want 7, %d", r.Info().Generation, r.Len(), o.Listings)
	}

	// Counts per store.
	rows, err := conn.Query(ctx, "SELECT store, uniqExact(id) FROM listings GROUP BY store")
	if err != nil {
		t.Fatal(err)
	}
	want := [views.NumStores]int{}
	for rows.Next() {
		var s uint8
		var n uint64
		if err := rows.Scan(&s, &n); err != nil {
			t.Fatal(err)
		}
		want[s] = int(n)
	}
	rows.Close()
	if got := r.Counts(); got != want {
		t.Fatalf("counts per store %v, database %v", got, want)
	}

	// Every field of a sample: every 7th listing of each store.
	meta, err := conn.Query(ctx, `SELECT store, id, slug, name, developer, category, kind, description, icon,
		version, store_updated, store_created, first_seen, delisted_at, featured, manifest_version, permissions,
		host_access, access_level, topics, crawled_at
		FROM (SELECT * FROM listings ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id)
		WHERE cityHash64(id) % 7 = 0`)
	if err != nil {
		t.Fatal(err)
	}
	defer meta.Close()
	checked := 0
	for meta.Next() {
		var (
			store, kind, featured, mv, al uint8
			id, name, dev, cat, desc      string
			icon, version                 string
			slug                          *string
			upd, cre, del                 *time.Time
			first, crawled                time.Time
			perms, hosts, topics          []string
		)
		if err := meta.Scan(&store, &id, &slug, &name, &dev, &cat, &kind, &desc, &icon, &version, &upd, &cre,
			&first, &del, &featured, &mv, &perms, &hosts, &al, &topics, &crawled); err != nil {
			t.Fatal(err)
		}
		l := r.Lookup(views.Store(store), id)
		if l == nil {
			t.Fatalf("%d/%s missing from the replica", store, id)
		}
		wantL := views.Listing{Store: views.Store(store), ID: id, Name: name, Developer: dev, Category: cat,
			Kind: views.Kind(kind), Description: firstRunes(desc, views.DescriptionLimit), Icon: icon,
			Version: version, Updated: day(upd), Created: day(cre), FirstSeen: first.Unix(), MetaAt: crawled.Unix(),
			Featured: featured == 1, ManifestVersion: mv, AccessLevel: al,
			Permissions: nilIfEmpty(perms), HostAccess: nilIfEmpty(hosts), Topics: nilIfEmpty(topics)}
		if slug != nil {
			wantL.Slug = *slug
		}
		if del != nil {
			wantL.Delisted = del.Unix()
		}
		checkReading(t, conn, &wantL)
		if !reflect.DeepEqual(*l, wantL) {
			t.Fatalf("listing %d/%s:\n replica %+v\ndatabase %+v", store, id, *l, wantL)
		}
		checked++
	}
	if checked < o.Listings/10 {
		t.Fatalf("only %d listings compared", checked)
	}
}

// checkReading fills l's newest reading from the snapshots table itself.
func checkReading(t *testing.T, conn driver.Conn, l *views.Listing) {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT crawled_at, usage, weekly_downloads, rating,
		rating_count, stars FROM snapshots WHERE store = ? AND id = ? ORDER BY crawled_at DESC LIMIT 1`,
		uint8(l.Store), l.ID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	l.SetUsage(0, false)
	l.SetWeeklyDownloads(0, false)
	l.SetRatingCount(0, false)
	l.SetRating(0, false)
	if !rows.Next() {
		return // never read
	}
	var (
		at                   time.Time
		usage, weekly, count *uint64
		rating               *float64
		stars                []uint32
	)
	if err := rows.Scan(&at, &usage, &weekly, &rating, &count, &stars); err != nil {
		t.Fatal(err)
	}
	l.ReadAt = at.Unix()
	opt := func(v *uint64) (int64, bool) {
		if v == nil {
			return 0, false
		}
		return int64(*v), true
	}
	l.SetUsage(opt(usage))
	l.SetWeeklyDownloads(opt(weekly))
	l.SetRatingCount(opt(count))
	if rating != nil {
		l.SetRating(*rating, true)
	}
	if len(stars) == 5 {
		l.HasStars = true
		copy(l.Stars[:], stars)
	}
}

func day(t *time.Time) views.Day {
	if t == nil {
		return views.NoDay
	}
	return views.Day(t.Unix() / 86400)
}

func nilIfEmpty(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	return ss
}

func firstRunes(s string, n int) string {
	r := []rune(s)
	if len(r) > n {
		return string(r[:n])
	}
	return s
}
