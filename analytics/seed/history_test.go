package seed

import (
	"testing"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views/changes"
)

func metaOf(l *analytics.ListingRow) changes.Meta {
	m := changes.Meta{At: l.CrawledAt.Unix(), Version: l.Version, Developer: l.Developer, Name: l.Name, Category: l.Category,
		Featured: l.Featured, ManifestVersion: l.ManifestVersion, AccessLevel: l.AccessLevel, Permissions: l.Permissions, HostAccess: l.HostAccess}
	if l.DelistedAt != nil {
		m.Delisted = l.DelistedAt.Unix()
	}
	return m
}

// TestHistoriesHaveEveryKindOfChange diffs the metadata versions the
// seeder writes, as the edge does, and checks that every kind of change
// occurs at the rate the seeder means: a version bump in most updates,
// permissions in a few percent, a new developer in about a percent (with
// the sales of chrome and edge extensions staged for the change feed's
// takeovers: stageSale), and delistings with their returns.
func TestHistoriesHaveEveryKindOfChange(t *testing.T) {
	const n = 20000
	rows := generate(Options{Seed: 3, Listings: n, Days: 400, ReviewsPerListing: 0, End: testEnd, Shares: SharesTest}, n)
	count := map[changes.Kind]int{}
	widened, updates := 0, 0
	var cs []changes.Change
	ls := rows.Listings
	for i := 1; i < len(ls); i++ {
		a, b := &ls[i-1], &ls[i]
		if a.Store != b.Store || a.ID != b.ID {
			continue
		}
		if !a.CrawledAt.Before(b.CrawledAt) {
			t.Fatalf("%s/%s: versions at %v then %v", b.Store, b.ID, a.CrawledAt, b.CrawledAt)
		}
		updates++
		prev, next := metaOf(a), metaOf(b)
		cs = changes.Diff(cs[:0], b.Store, b.ID, &prev, &next)
		for _, c := range cs {
			count[c.Kind]++
			if c.Widened {
				widened++
			}
			if c.Kind.Manifest() && !b.Store.ReadsManifests() {
				t.Fatalf("%s/%s: a %s change on %s", b.Store, b.ID, c.Kind, b.Store)
			}
		}
	}
	t.Logf("%d listings, %d updates: %v, %d widening host access", n, updates, count, widened)
	share := func(k changes.Kind) float64 { return float64(count[k]) / float64(updates) }
	if updates < n {
		t.Errorf("%d updates of %d listings: fewer than one each", updates, n)
	}
	for _, c := range []struct {
		kind   changes.Kind
		lo, hi float64
	}{
		{changes.Version, 0.8, 1}, {changes.Permissions, 0.005, 0.08}, {changes.HostAccess, 0.002, 0.05},
		{changes.Developer, 0.0005, 0.02}, {changes.Name, 0.003, 0.03}, {changes.Category, 0.001, 0.01},
		{changes.Featured, 0.003, 0.03}, {changes.Delisted, 0.0005, 0.05}, {changes.Relisted, 0.0002, 0.01},
		{changes.ManifestVersion, 0.0005, 0.02},
	} {
		if s := share(c.kind); s < c.lo || s > c.hi {
			t.Errorf("%s in %.4f of updates, want %.4f to %.4f", c.kind, s, c.lo, c.hi)
		}
	}
	if widened == 0 || widened >= count[changes.HostAccess] {
		t.Errorf("%d of %d host access changes widen it: want some, not all", widened, count[changes.HostAccess])
	}
}
