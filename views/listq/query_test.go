package listq

import (
	"fmt"
	"slices"
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// bruteQuery answers q the slow, obvious way: every match in the order
// bruteList gives (independent of the precomputed orders and bitmaps),
// then the page.
func bruteQuery(f *Engine, q *Query) (int, []string) {
	all := bruteList(f, q)
	from := min((q.Page-1)*q.PageSize, len(all))
	return len(all), all[from:min(from+q.PageSize, len(all))]
}

func TestLegacyMatchesBruteForce(t *testing.T) {
	r := replicatest.Synth(4000, nil)
	// Give names shared prefixes and duplicates, and some listings a manifest filterable value.
	for i := range r.All() {
		l := &r.All()[i]
		l.Name = []string{"Smart Tab Manager", "Smart Tab Saver", "Smart Tab Manager", "Zed", "ab", "Éclair", ""}[i%7] + fmt.Sprint(i%5)
		l.Version = []string{"1.0", "1.0.0", "2.10", "2.9", "v1.2", "10.1.3", "beta"}[i%7]
		if i%3 == 0 {
			l.HostAccess = []string{"<all_urls>"}
		}
		if i%11 == 0 {
			l.Featured = true
		}
		l.Kind = views.Kind(i % 4)
		l.Developer = fmt.Sprintf("Dev %d", i%100)
		if i%13 == 0 {
			l.Updated = views.NoDay // the store gives no date
		}
	}
	r = replica.New(r.All(), r.Info()) // a replica is immutable: build a new one from the edited listings
	r.IndexText()
	f := build(r)
	s2, s3 := views.Store(2), views.Store(3)
	cat := "Category 1"
	perm := "storage"
	minV, maxV := "1.0", "2.10"
	lo, hi := 2.5, 4.0
	var minRC int64 = 10
	day := views.DayOf(r.Info().ReadingsMark) - 300
	yes, no := true, false
	k1 := views.KindExtension
	var al uint8 = 2
	s0 := views.Chrome
	unknown := "No Such Category"
	minI, maxI, hugeI := 10.5, 3000.0, 1e300
	var maxRC int64 = 40
	early := day - 200
	for _, base := range []Query{
		{},
		{Store: &s2},
		{Store: &s3, Category: &cat},
		{Store: &s0, Kind: &k1, MinAccessLevel: &al},              // flags only: the total from the flag histograms
		{Store: &s0, Featured: &yes, IncludeDelisted: true},       // flags only
		{MinAccessLevel: &al},                                     // flags only, matched in two stores of five
		{Category: &cat, Permission: &perm},                       // one posting list, the other tested by column
		{Store: &s0, Permission: &perm, Category: &cat},           // posting lists cut to the store
		{Category: &unknown},                                      // no listing has it
		{Store: &s3, Category: &cat, MinRating: &lo, Rated: &yes}, // the category's list, then the columns
		{MinInstalls: &minI, MaxInstalls: &maxI, IncludeDelisted: true},
		{MinInstalls: &hugeI},
		{UpdatedBefore: &day, FirstSeenAfter: &early, MaxRatingCount: &maxRC, MinAccessLevel: &al},
		{DelistedBefore: &day, Category: &cat, Rated: &yes},
		{MaxVersion: &maxV, Store: &s0},
		{MinRating: &hi, MaxRating: &lo},            // an empty range
		{MinVersion: &maxV, MaxVersion: &minV},      // an empty range
		{UpdatedAfter: &day, UpdatedBefore: &early}, // an empty range
		{IncludeDelisted: true},
		{DelistedOnly: true},
		{DelistedAfter: &day},
		{MinRating: &lo, MaxRating: &hi},
		{Rated: &no},
		{Rated: &yes, MinRatingCount: &minRC},
		{MinVersion: &minV, MaxVersion: &maxV},
		{Permission: &perm, HostAccessAll: true},
		{UpdatedAfter: &day, Featured: &yes},
		{FirstSeenBefore: &day, Kind: &k1},
		{Q: "tab"},
		{Q: "éCLAIR"},
		{Q: "smart", Store: &s2, MinRating: &lo},          // a common word: tested by columns
		{Q: "dev 42", Rated: &yes},                        // a rare one (1%): its matches tested alone
		{Q: "dev 42", Store: &s3, Category: &cat},         // within a store, by the category's list
		{Q: "Zed", Permission: &perm, MinInstalls: &minI}, // text, a posting list and columns
	} {
		for sort := range Sort(len(SortNames)) {
			for _, asc := range []bool{false, true} {
				for _, page := range []struct{ n, size int }{{1, 50}, {3, 7}, {1000, 200}} {
					q := base
					q.Sort, q.Asc, q.Page, q.PageSize = sort, asc, page.n, page.size
					q.OnlyWithValue = sort.Spec().Growth // as the legacy API asks
					wantTotal, wantIDs := bruteQuery(f, &q)
					// Scans run on one core, and split over the cores
					// from 64 listings on (at 2^20 and more otherwise).
					for i, split := range []int{scanParallelMin, 64, scanParallelMin, scanParallelMin, scanParallelMin} {
						f.cols.parallelMin, f.cols.strategy = split, []int{byCost, byCost, walkAlways, sortAlways, listAlways}[i]
						total, rows, _ := f.Page(&q)
						var ids []string
						for _, l := range rows {
							ids = append(ids, l.Store.String()+"/"+l.ID)
						}
						if total != wantTotal || !slices.Equal(ids, wantIDs) {
							t.Fatalf("query %+v sort %s asc %v page %v split %d strategy %d:\n got %d %v\nwant %d %v",
								base, SortNames[sort], asc, page, split, f.cols.strategy, total, ids, wantTotal, wantIDs)
						}
					}
				}
			}
		}
	}
}
