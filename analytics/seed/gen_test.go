package seed

import (
	"math"
	"reflect"
	"regexp"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
)

var testEnd = time.Date(2026, 11, 2, 15, 0, 0, 0, time.UTC)

func generate(o Options, n int) Rows {
	g := NewGenerator(o)
	var r Rows
	for i := range n {
		g.Append(&r, i)
	}
	return r
}

func TestGeneratorIsDeterministic(t *testing.T) {
	o := Options{Seed: 7, Listings: 400, Days: 60, ReviewsPerListing: 5, End: testEnd}
	a, b := generate(o, 400), generate(o, 400)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same options gave different rows")
	}
	o.Seed = 8
	if c := generate(o, 400); reflect.DeepEqual(a.Listings, c.Listings) {
		t.Fatal("a different seed gave the same listings")
	}
	// A listing does not depend on which generator made it or what came before.
	g := NewGenerator(Options{Seed: 7, Listings: 400, Days: 60, ReviewsPerListing: 5, End: testEnd})
	var one Rows
	g.Append(&one, 123)
	var before, again Rows
	g2 := NewGenerator(Options{Seed: 7, Listings: 400, Days: 60, ReviewsPerListing: 5, End: testEnd})
	for i := 100; i < 123; i++ {
		g2.Append(&before, i)
	}
	g2.Append(&again, 123)
	if !reflect.DeepEqual(one, again) {
		t.Fatal("listing 123 differs with generation order")
	}
}

var idShapes = map[views.Store]*regexp.Regexp{
	views.Chrome:     regexp.MustCompile(`^[a-p]{32}$`),
	views.Edge:       regexp.MustCompile(`^[a-p]{32}$`),
	views.Firefox:    regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`),
	views.Apple:      regexp.MustCompile(`^[1-9][0-9]{8,9}$`),
	views.GooglePlay: regexp.MustCompile(`^com\.[a-z]+\.[a-z0-9]+$`),
}

func TestGeneratedDataShape(t *testing.T) {
	const n = 20000
	o := Options{Seed: 1, Listings: n, Days: 40, ReviewsPerListing: 5, End: testEnd}
	rows := generate(o, n)

	ids := map[string]bool{}
	var perStore [views.NumStores]int
	newest := map[string]int{} // key -> index of newest version
	for i, l := range rows.Listings {
		key := l.Store.String() + "/" + l.ID
		if j, ok := newest[key]; !ok || rows.Listings[j].CrawledAt.Before(l.CrawledAt) {
			newest[key] = i
		}
		if !idShapes[l.Store].MatchString(l.ID) {
			t.Fatalf("%s id %q has the wrong shape", l.Store, l.ID)
		}
	}
	for _, i := range newest {
		l := rows.Listings[i]
		ids[l.Store.String()+"/"+l.ID] = true
		perStore[l.Store]++
		if l.Store.ReadsManifests() != (l.ManifestVersion != 0) && l.Name != "" {
			t.Errorf("%s %s: manifest version %d", l.Store, l.ID, l.ManifestVersion)
		}
		if !l.Store.ReadsManifests() && (l.AccessLevel != 0 || len(l.Permissions) != 0) {
			t.Errorf("%s %s has a manifest", l.Store, l.ID)
		}
	}
	if len(ids) != n {
		t.Fatalf("%d distinct listings, want %d", len(ids), n)
	}
	for s, c := range perStore {
		if c < n/20 {
			t.Errorf("store %s has only %d listings", views.Store(s), c)
		}
	}

	latest := map[string]float64{}
	delistedAt := map[string]time.Time{}
	for _, i := range newest {
		if l := rows.Listings[i]; l.DelistedAt != nil {
			delistedAt[l.Store.String()+"/"+l.ID] = *l.DelistedAt
		}
	}
	midnight := 0
	for _, s := range rows.Snapshots {
		key := s.Store.String() + "/" + s.ID
		if !ids[key] {
			t.Fatalf("snapshot of unknown listing %s", key)
		}
		if d, ok := delistedAt[key]; ok && s.CrawledAt.After(d) {
			t.Fatalf("%s read at %v after delisting at %v", key, s.CrawledAt, d)
		}
		if s.CrawledAt.After(testEnd) {
			t.Fatalf("%s read after the end", key)
		}
		if s.CrawledAt.Equal(s.CrawledAt.Truncate(24 * time.Hour)) {
			midnight++
		}
		if (s.Usage == nil) != (s.Store == views.Apple) {
			t.Fatalf("%s: usage %v on store %s", key, s.Usage, s.Store)
		}
		if (s.WeeklyDownloads != nil) != (s.Store == views.Firefox) {
			t.Fatalf("%s: weekly downloads on store %s", key, s.Store)
		}
		if s.RatingCount != nil {
			var sum, cnt uint64
			for k, c := range s.Stars {
				sum += uint64(k+1) * uint64(c)
				cnt += uint64(c)
			}
			if cnt != *s.RatingCount {
				t.Fatalf("%s: star histogram sums to %d, rating count %d", key, cnt, *s.RatingCount)
			}
			if want := math.Round(float64(sum)/float64(cnt)*100) / 100; *s.Rating != want {
				t.Fatalf("%s: rating %v, histogram mean %v", key, *s.Rating, want)
			}
		} else if s.Rating != nil || len(s.Stars) != 0 {
			t.Fatalf("%s: unrated but rating %v stars %v", key, s.Rating, s.Stars)
		}
		size := 0.0
		if s.Usage != nil {
			size = float64(*s.Usage)
		} else if s.RatingCount != nil {
			size = float64(*s.RatingCount)
		}
		latest[key] = size
	}
	if midnight == 0 {
		t.Error("no crawl falls on midnight UTC")
	}
	small, big := 0, 0
	for _, v := range latest {
		if v < 1000 {
			small++
		}
		if v >= 100_000 {
			big++
		}
	}
	if small < len(latest)*8/10 || big == 0 {
		t.Errorf("sizes not heavy-tailed: %d of %d under 1,000, %d over 100,000", small, len(latest), big)
	}
	langs := map[string]bool{}
	for _, r := range rows.Reviews {
		if r.Store == views.Chrome {
			t.Fatal("a review for chrome")
		}
		if r.Stars < 1 || r.Stars > 5 {
			t.Fatalf("review stars %d", r.Stars)
		}
		langs[r.Lang] = true
	}
	if len(langs) < 8 || len(rows.Reviews) < n {
		t.Errorf("%d reviews in %d languages", len(rows.Reviews), len(langs))
	}
}

func TestChromeRounding(t *testing.T) {
	for _, c := range []struct{ in, want uint64 }{
		{0, 0}, {999, 999}, {1000, 1000}, {1234, 1230}, {98765, 98700}, {9_999_999, 9_990_000},
		{10_000_000, 10_000_000}, {55_000_000, 10_000_000},
	} {
		if got := chromeRounding(c.in); got != c.want {
			t.Errorf("chromeRounding(%d) = %d, want %d", c.in, got, c.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	good := Options{Seed: 1, Listings: 10, Days: 10, End: testEnd}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []Options{
		{Listings: 0, Days: 10, End: testEnd},
		{Listings: 1, Days: 0, End: testEnd},
		{Listings: 1, Days: 10, ReviewsPerListing: -1, End: testEnd},
		{Listings: 1, Days: 10},
	} {
		if bad.Validate() == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestRealShares: with SharesReal each store gets its share of the five
// stores' real size, and the test spread stays as it was.
func TestRealShares(t *testing.T) {
	const n = 20000
	end := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var total float64
	for _, v := range realListings {
		total += v
	}
	for _, c := range []struct {
		shares Shares
		want   [views.NumStores]float64
	}{
		{SharesReal, [views.NumStores]float64{realListings[0] / total, realListings[1] / total, realListings[2] / total, realListings[3] / total, realListings[4] / total}},
		{SharesTest, [views.NumStores]float64{0.40, 0.10, 0.10, 0.18, 0.22}},
	} {
		rows := generate(Options{Seed: 9, Listings: n, Days: 1, End: end, Shares: c.shares}, n)
		var got [views.NumStores]float64
		seen := map[string]bool{}
		for _, l := range rows.Listings {
			if k := l.Store.String() + "/" + l.ID; !seen[k] {
				seen[k] = true
				got[l.Store]++
			}
		}
		for s, share := range c.want {
			// Three standard deviations of a binomial count.
			if d, sd := math.Abs(got[s]-share*n), math.Sqrt(n*share*(1-share)); d > 3*sd+1 {
				t.Errorf("shares %q: %s has %.0f listings of %d, want about %.0f", c.shares, views.Store(s), got[s], n, share*n)
			}
		}
	}
	if err := (Options{Listings: 1, Days: 1, End: end, Shares: "even"}).Validate(); err == nil {
		t.Error("an unknown spread was accepted")
	}
}
