package memload_test

import (
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/memload"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// TestLinkingPrecisionRecall measures the links across stores against the
// seeder's twins (the truth): a twin pair linked is a true positive, a
// link between listings that are not twins a false positive, a pair not
// linked a false negative. The seeder's names come from a small
// vocabulary, so same-named listings of one developer across stores that
// are not twins are common: the hard case for precision.
func TestLinkingPrecisionRecall(t *testing.T) {
	for _, tc := range []struct {
		name      string
		listings  int
		shares    seed.Shares
		precision float64
		recall    float64
	}{
		{"test shares", 20000, seed.SharesTest, 0.97, 0.9},
		{"real shares", 100000, seed.SharesReal, 0.97, 0.9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := seed.Options{Seed: 11, Listings: tc.listings, Days: 15, End: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Shares: tc.shares}
			rows := seed.Generate(o)
			r := memload.New(rows.Listings, rows.Snapshots).Replica(1, time.Now())
			f := figures.Build(r, 0)
			// The truth: twin pairs of listings read at least once (only
			// those are linked: an unread listing answers 404).
			truth := map[[2]analytics.ListingKey]bool{}
			chromeOf := map[analytics.ListingKey]analytics.ListingKey{} // a twin's chrome listing
			for _, tw := range seed.Twins(o) {
				a, b := r.Lookup(tw.A.Store, tw.A.ID), r.Lookup(tw.B.Store, tw.B.ID)
				if a == nil || b == nil || !a.Crawled() || !b.Crawled() {
					continue
				}
				truth[[2]analytics.ListingKey{tw.A, tw.B}] = true
				chromeOf[tw.B] = tw.A
			}
			if len(truth) < 100 {
				t.Fatalf("only %d twins in the dataset", len(truth))
			}
			// Each link once; a link between an edge and a firefox listing
			// is right when both are twins of one chrome listing.
			tp, fp, other := 0, 0, 0
			for i := range r.All() {
				l := &r.All()[i]
				for _, k := range f.Links(l) {
					o := f.Replica().At(k.Index)
					if o.Store < l.Store {
						continue
					}
					a, b := analytics.ListingKey{Store: l.Store, ID: l.ID}, analytics.ListingKey{Store: o.Store, ID: o.ID}
					switch {
					case truth[[2]analytics.ListingKey{a, b}]:
						tp++
					case l.Store != views.Chrome && chromeOf[a] != (analytics.ListingKey{}) && chromeOf[a] == chromeOf[b]:
						other++
					default:
						fp++
						if fp <= 3 {
							t.Logf("wrong link: %q by %q (%s) and %q by %q (%s), %.2f", l.Name, l.Developer, l.Store, o.Name, o.Developer, o.Store, k.Confidence)
						}
					}
				}
			}
			tp += other
			want := len(truth)
			// Pairs of twins of one chrome listing in edge and firefox.
			byChrome := map[analytics.ListingKey]int{}
			for _, c := range chromeOf {
				byChrome[c]++
			}
			for _, n := range byChrome {
				if n == 2 {
					want++
				}
			}
			precision := float64(tp) / float64(tp+fp)
			recall := float64(tp) / float64(want)
			t.Logf("%d listings (%s): %d pairs of twins read, %d linked right, %d wrong: precision %.3f, recall %.3f",
				tc.listings, tc.name, want, tp, fp, precision, recall)
			if precision < tc.precision || recall < tc.recall {
				t.Errorf("precision %.3f (want %.2f or more), recall %.3f (want %.2f or more)", precision, tc.precision, recall, tc.recall)
			}
		})
	}
}
