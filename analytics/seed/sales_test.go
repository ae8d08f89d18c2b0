package seed

import (
	"testing"
	"time"

	"github.com/edge-stats/edge/views/changes"
)

// TestDemoHoldsTakeoversAndNearMisses: the dataset make run seeds (20,000
// listings, 400 days, the stores' real shares) holds, in the edge's
// default change window (180 days), takeovers of each widening path and
// the near misses beside them: a new owner who asks for nothing more, and
// one who asks more than 90 days later.
func TestDemoHoldsTakeoversAndNearMisses(t *testing.T) {
	const n = 20000
	rows := generate(Options{Seed: DefaultOptions().Seed, Listings: n, Days: 400, End: testEnd, Shares: SharesReal}, n)
	var cs []changes.Change
	ls := rows.Listings
	for i := 1; i < len(ls); i++ {
		a, b := &ls[i-1], &ls[i]
		if a.Store == b.Store && a.ID == b.ID {
			prev, next := metaOf(a), metaOf(b)
			cs = changes.Diff(cs, b.Store, b.ID, &prev, &next)
		}
	}
	from := testEnd.Add(-180 * 24 * time.Hour).Unix()
	log := changes.NewLog(cs, from)
	var sales, takeovers, sameCrawl, late, none int
	for i := range log.Len() {
		c := log.At(i)
		switch c.Kind {
		case changes.Takeover:
			takeovers++
			if dev, _, ok := log.Joins(c); ok && dev.At == c.At {
				sameCrawl++
			}
		case changes.Developer:
			sales++
			// What came after this sale, up to the listing's next one.
			all, _ := log.Listing(c.Store, c.ID, changes.Pos{}, 1000)
			next := int64(1 << 62)
			for _, o := range all {
				if o.Kind == changes.Developer && o.At > c.At {
					next = min(next, o.At)
				}
			}
			taken, widenedLate := false, false
			for _, o := range all {
				if o.At < c.At || o.At >= next {
					continue
				}
				if o.Kind == changes.Takeover && o.Before == c.Before && o.After == c.After {
					taken = true
				}
				if o.Widens() && o.At-c.At > changes.TakeoverWindow {
					widenedLate = true
				}
			}
			switch {
			case taken:
			case widenedLate:
				late++
			default:
				none++
			}
		}
	}
	t.Logf("in the window: %d sales, %d takeovers (%d in the sale's crawl), near misses: %d widened after 90 days, %d never",
		sales, takeovers, sameCrawl, late, none)
	if takeovers < 5 || sameCrawl == 0 || sameCrawl == takeovers {
		t.Errorf("%d takeovers, %d in the sale's crawl: want at least 5, some in the sale's crawl and some later", takeovers, sameCrawl)
	}
	if late == 0 || none == 0 {
		t.Errorf("near misses: %d widened after 90 days, %d never: want some of each", late, none)
	}
}
