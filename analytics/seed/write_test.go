package seed_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
)

var srv *chtest.Server

func TestMain(m *testing.M) { chtest.Main(m, &srv) }

var end = time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC)

func small() seed.Options {
	return seed.Options{Seed: 42, Listings: 300, Days: 30, ReviewsPerListing: 4, End: end}
}

func generated(o seed.Options) seed.Rows {
	g := seed.NewGenerator(o)
	var r seed.Rows
	for i := range o.Listings {
		g.Append(&r, i)
	}
	return r
}

// The readers below are written independently of the code under test.

func readListings(t *testing.T, conn driver.Conn) []analytics.ListingRow {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT store, id, crawled_at, slug, name, developer,
		category, kind, description, icon, version, store_updated, store_created, first_seen, delisted_at,
		featured, manifest_version, permissions, host_access, access_level, topics FROM listings`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []analytics.ListingRow
	for rows.Next() {
		var l analytics.ListingRow
		var store, kind, featured uint8
		if err := rows.Scan(&store, &l.ID, &l.CrawledAt, &l.Slug, &l.Name, &l.Developer, &l.Category,
			&kind, &l.Description, &l.Icon, &l.Version, &l.StoreUpdated, &l.StoreCreated, &l.FirstSeen,
			&l.DelistedAt, &featured, &l.ManifestVersion, &l.Permissions, &l.HostAccess, &l.AccessLevel,
			&l.Topics); err != nil {
			t.Fatal(err)
		}
		l.Store, l.Kind, l.Featured = views.Store(store), views.Kind(kind), featured == 1
		out = append(out, normListing(l))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func readSnapshots(t *testing.T, conn driver.Conn) []analytics.SnapshotRow {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT store, id, crawled_at, usage, weekly_downloads,
		rating, rating_count, stars FROM snapshots`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []analytics.SnapshotRow
	for rows.Next() {
		var s analytics.SnapshotRow
		var store uint8
		if err := rows.Scan(&store, &s.ID, &s.CrawledAt, &s.Usage, &s.WeeklyDownloads, &s.Rating,
			&s.RatingCount, &s.Stars); err != nil {
			t.Fatal(err)
		}
		s.Store = views.Store(store)
		s.CrawledAt = s.CrawledAt.UTC()
		if len(s.Stars) == 0 {
			s.Stars = nil
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func readReviews(t *testing.T, conn driver.Conn) []analytics.ReviewRow {
	t.Helper()
	rows, err := conn.Query(context.Background(), `SELECT store, listing_id, review_id, posted_at, stars,
		author, lang, text, crawled_at FROM reviews FINAL`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []analytics.ReviewRow
	for rows.Next() {
		var r analytics.ReviewRow
		var store uint8
		if err := rows.Scan(&store, &r.ListingID, &r.ReviewID, &r.PostedAt, &r.Stars, &r.Author, &r.Lang,
			&r.Text, &r.CrawledAt); err != nil {
			t.Fatal(err)
		}
		r.Store = views.Store(store)
		r.PostedAt, r.CrawledAt = r.PostedAt.UTC(), r.CrawledAt.UTC()
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// normListing puts times in UTC and empty arrays as nil, so values compare.
func normListing(l analytics.ListingRow) analytics.ListingRow {
	utc := func(t *time.Time) *time.Time {
		if t == nil {
			return nil
		}
		u := t.UTC()
		return &u
	}
	l.CrawledAt, l.FirstSeen = l.CrawledAt.UTC(), l.FirstSeen.UTC()
	l.StoreUpdated, l.StoreCreated, l.DelistedAt = utc(l.StoreUpdated), utc(l.StoreCreated), utc(l.DelistedAt)
	for _, ss := range []*[]string{&l.Permissions, &l.HostAccess, &l.Topics} {
		if len(*ss) == 0 {
			*ss = nil
		}
	}
	return l
}

func normListings(ls []analytics.ListingRow) []analytics.ListingRow {
	out := make([]analytics.ListingRow, len(ls))
	for i, l := range ls {
		out[i] = normListing(l)
	}
	return out
}

func byKey[T any](key func(T) string) func(a, b T) int {
	return func(a, b T) int { return cmp.Compare(key(a), key(b)) }
}

func listingKey(l analytics.ListingRow) string { return fmt.Sprint(l.Store, "/", l.ID) }
func listingVersionKey(l analytics.ListingRow) string {
	return fmt.Sprint(l.Store, "/", l.ID, "/", l.CrawledAt.Unix())
}
func snapshotKey(s analytics.SnapshotRow) string {
	return fmt.Sprint(s.Store, "/", s.ID, "/", s.CrawledAt.Unix())
}
func reviewKey(r analytics.ReviewRow) string {
	return fmt.Sprint(r.Store, "/", r.ListingID, "/", r.ReviewID)
}

func TestSeedReadsBackExactly(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	o := small()
	if _, err := seed.Write(context.Background(), conn, o, seed.WriteOptions{Workers: 3, Chunk: 37}); err != nil {
		t.Fatal(err)
	}
	want := generated(o)

	// Every metadata version is kept.
	gotL, wantL := readListings(t, conn), normListings(want.Listings)
	slices.SortFunc(gotL, byKey(listingVersionKey))
	slices.SortFunc(wantL, byKey(listingVersionKey))
	if len(gotL) != len(wantL) || len(wantL) <= o.Listings {
		t.Fatalf("%d listing versions read, %d generated for %d listings", len(gotL), len(wantL), o.Listings)
	}
	for i := range wantL {
		if !reflect.DeepEqual(gotL[i], wantL[i]) {
			t.Fatalf("listing %d differs:\n got %+v\nwant %+v", i, gotL[i], wantL[i])
		}
	}

	gotS, wantS := readSnapshots(t, conn), slices.Clone(want.Snapshots)
	slices.SortFunc(gotS, byKey(snapshotKey))
	slices.SortFunc(wantS, byKey(snapshotKey))
	if len(gotS) != len(wantS) || len(wantS) < o.Listings {
		t.Fatalf("%d snapshots read, %d generated", len(gotS), len(wantS))
	}
	for i := range wantS {
		if !reflect.DeepEqual(gotS[i], wantS[i]) {
			t.Fatalf("snapshot %d differs:\n got %+v\nwant %+v", i, gotS[i], wantS[i])
		}
	}

	gotR, wantR := readReviews(t, conn), slices.Clone(want.Reviews)
	slices.SortFunc(gotR, byKey(reviewKey))
	slices.SortFunc(wantR, byKey(reviewKey))
	if len(gotR) != len(wantR) || len(wantR) == 0 {
		t.Fatalf("%d reviews read, %d generated", len(gotR), len(wantR))
	}
	for i := range wantR {
		if gotR[i] != wantR[i] {
			t.Fatalf("review %d differs:\n got %+v\nwant %+v", i, gotR[i], wantR[i])
		}
	}
}

// TestEdgeCasesReadBack writes hand-made rows with every kind of awkward
// value through the writers and reads them back.
func TestEdgeCasesReadBack(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	ctx := context.Background()
	midnight := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	lastSecond := midnight.Add(-time.Second)
	slug := `naïve-ünïcode-😀`
	day := time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC)
	u, zero := uint64(18446744073709551615), uint64(0)
	rating := 4.123456789
	listings := []analytics.ListingRow{
		{Store: views.Chrome, ID: "abcdefghijklmnopabcdefghijklmnop", CrawledAt: midnight, Slug: &slug,
			Name: `Name, with "quotes"` + "\nand a newline", Developer: "Дмитрий 田中 أحمد", Category: "Tools",
			Kind: views.KindExtension, Description: "emoji 🎉👍🏽 and \x00 nul? no: tab\there", Icon: "x",
			Version: "1.0", StoreUpdated: &day, StoreCreated: nil, FirstSeen: lastSecond, DelistedAt: &midnight,
			Featured: true, ManifestVersion: 3, Permissions: []string{"<all_urls>", "tabs"},
			HostAccess: []string{"*://*/*"}, AccessLevel: 4, Topics: []string{"privacy"}},
		{Store: views.Apple, ID: "300000001", CrawledAt: lastSecond, FirstSeen: midnight},
	}
	snaps := []analytics.SnapshotRow{
		{Store: views.Chrome, ID: listings[0].ID, CrawledAt: midnight, Usage: &u, Rating: &rating,
			RatingCount: &zero, Stars: []uint32{0, 1, 2, 3, 4294967295}},
		{Store: views.Chrome, ID: listings[0].ID, CrawledAt: lastSecond},
		{Store: views.Apple, ID: "300000001", CrawledAt: midnight.Add(24*time.Hour - time.Second)},
	}
	reviews := []analytics.ReviewRow{{Store: views.Apple, ListingID: "300000001", ReviewID: "r1",
		PostedAt: midnight, Stars: 1, Author: "O'Brien", Lang: "ar", Text: "تطبيق رائع 'quoted' \"double\" \\ backslash",
		CrawledAt: lastSecond}}
	if err := analytics.WriteListings(ctx, conn, listings); err != nil {
		t.Fatal(err)
	}
	if err := analytics.WriteSnapshots(ctx, conn, snaps); err != nil {
		t.Fatal(err)
	}
	if err := analytics.WriteReviews(ctx, conn, reviews); err != nil {
		t.Fatal(err)
	}
	gotL := readListings(t, conn)
	slices.SortFunc(gotL, byKey(listingKey))
	wantL := []analytics.ListingRow{normListing(listings[0]), normListing(listings[1])}
	slices.SortFunc(wantL, byKey(listingKey))
	for i, want := range wantL {
		if !reflect.DeepEqual(gotL[i], want) {
			t.Errorf("listing %d:\n got %+v\nwant %+v", i, gotL[i], want)
		}
	}
	gotS := readSnapshots(t, conn)
	slices.SortFunc(gotS, byKey(snapshotKey))
	wantS := slices.Clone(snaps)
	slices.SortFunc(wantS, byKey(snapshotKey))
	if !reflect.DeepEqual(gotS, wantS) {
		t.Errorf("snapshots:\n got %+v\nwant %+v", gotS, wantS)
	}
	if got := readReviews(t, conn); !reflect.DeepEqual(got, reviews) {
		t.Errorf("reviews:\n got %+v\nwant %+v", got, reviews)
	}
	// The derived daily table puts each reading on its UTC day.
	var days []time.Time
	rows, err := conn.Query(ctx, "SELECT day FROM snapshots_daily FINAL WHERE store = 0 ORDER BY day")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var d time.Time
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		days = append(days, d.UTC())
	}
	if len(days) != 2 || !days[0].Equal(midnight.AddDate(0, 0, -1)) || !days[1].Equal(midnight) {
		t.Errorf("daily rows on days %v, want 2025-12-31 and 2026-01-01", days)
	}
}

// checksum summarizes a database's upstream tables in one value per table;
// the replacing reviews table is read FINAL, so background merges do not
// matter.
func checksum(t *testing.T, conn driver.Conn) map[string]string {
	t.Helper()
	q := map[string]string{
		"listings":  "SELECT count(), sum(cityHash64(store, id, crawled_at, name, developer, category, description, version, first_seen, permissions, topics)) FROM listings",
		"snapshots": "SELECT count(), sum(cityHash64(store, id, crawled_at, ifNull(usage, 0), ifNull(rating, 0), stars)) FROM snapshots",
		"reviews":   "SELECT count(), sum(cityHash64(store, listing_id, review_id, posted_at, text, author)) FROM reviews FINAL",
	}
	out := map[string]string{}
	for table, query := range q {
		var n, h uint64
		if err := conn.QueryRow(context.Background(), query).Scan(&n, &h); err != nil {
			t.Fatal(err)
		}
		out[table] = fmt.Sprint(n, ":", h)
	}
	return out
}

func TestSeedIsDeterministicAcrossDatabases(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, a := srv.Migrated(t)
	_, b := srv.Migrated(t)
	ctx := context.Background()
	if _, err := seed.Write(ctx, a, small(), seed.WriteOptions{Workers: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Write(ctx, b, small(), seed.WriteOptions{Workers: 4, Chunk: 11}); err != nil {
		t.Fatal(err)
	}
	if ca, cb := checksum(t, a), checksum(t, b); !reflect.DeepEqual(ca, cb) {
		t.Fatalf("same seed, different data:\n%v\n%v", ca, cb)
	}
}

func TestSeedRefusesNonEmptyDatabase(t *testing.T) {
	srv := chtest.Need(t, srv)
	_, conn := srv.Migrated(t)
	ctx := context.Background()
	o := small()
	o.Listings = 20
	var calls []seed.Progress
	p, err := seed.Write(ctx, conn, o, seed.WriteOptions{Progress: func(p seed.Progress) { calls = append(calls, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if p.Listings != 20 || p.Rows == 0 || len(calls) == 0 || !calls[len(calls)-1].Done {
		t.Fatalf("progress %+v, calls %d", p, len(calls))
	}
	before := checksum(t, conn)
	if _, err := seed.Write(ctx, conn, o, seed.WriteOptions{}); !errors.Is(err, seed.ErrNotEmpty) {
		t.Fatalf("second write: %v, want ErrNotEmpty", err)
	}
	if after := checksum(t, conn); !reflect.DeepEqual(before, after) {
		t.Fatal("a refused write changed the data")
	}
	if _, err := seed.Write(ctx, conn, o, seed.WriteOptions{Reset: true}); err != nil {
		t.Fatal(err)
	}
	if after := checksum(t, conn); !reflect.DeepEqual(before, after) {
		t.Fatalf("reset and reseed differ:\n%v\n%v", before, after)
	}
	o.Seed = 99
	if _, err := seed.Write(ctx, conn, o, seed.WriteOptions{Append: true}); err != nil {
		t.Fatal(err)
	}
	if after := checksum(t, conn); after["snapshots"] == before["snapshots"] {
		t.Fatal("append wrote nothing")
	}
}
