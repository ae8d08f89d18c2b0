package listq

import (
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// TestPageBeforeWalksBack: for every page of a query but the first, in
// every order, either way and with every strategy, PageBefore of the
// page's first row gives the cursor the forward paging gave the page
// before it (nil for the first page), or says it cannot tell, which it
// may only when that row has no sort value.
func TestPageBeforeWalksBack(t *testing.T) {
	r := replicatest.Synth(3000, nil)
	for i := range r.All() {
		r.All()[i].Name = []string{"Alpha", "alpha", "Beta Tab", "Zulu", ""}[i%5]
	}
	r = replica.New(r.All(), r.Info())
	f := build(r)
	s1, s3 := views.Edge, views.Apple
	var lo, hi int64 = 10, 5000
	topic, cat := "topic-3", "Category 0"
	told := 0
	for _, base := range []Query{
		{},
		{Store: &s1},
		{Store: &s3, MinSize: &lo, MaxSize: &hi},
		{Topic: &topic},
		{Category: &cat, Store: &s3},
		{Category: &cat, Q: "TAB", NameOnly: true},
		{Q: "listing 1"},
	} {
		for _, sort := range []Sort{SortSize, SortStoreRank, SortCreated, SortRankClimb, SortName, SortRating, SortGrowth7d, SortGrowthPct7d, SortUpdated} {
			if catalogue[sort].NeedsStore && base.Store == nil {
				continue
			}
			for _, asc := range []bool{false, true} {
				q := base
				q.Sort, q.Asc, q.PageSize, q.Page = sort, asc, 7, 1
				for _, strategy := range []int{byCost, walkAlways, sortAlways, listAlways} {
					f.cols.strategy = strategy
					var afters []*Pos // the cursor each page was asked with
					var after *Pos
					for n := 0; n < 60; n++ {
						page, last, more, _ := f.List(&q, after)
						if n > 0 && len(page) > 0 {
							got, ok := f.PageBefore(&q, page[0])
							want := afters[n-1]
							switch {
							case !ok && f.posAt(r.Index(page[0]), sort).HasKey:
								t.Fatalf("query %+v sort %v asc %v strategy %d page %d: cannot tell the page before a row with a value", base, sort, asc, strategy, n+1)
							case ok && !samePos(got, want):
								t.Fatalf("query %+v sort %v asc %v strategy %d page %d: the page before starts after %+v, want %+v", base, sort, asc, strategy, n+1, got, want)
							case ok:
								told++
							}
						}
						afters = append(afters, after)
						if !more {
							break
						}
						after = &last
					}
				}
			}
		}
	}
	f.cols.strategy = byCost
	t.Logf("%d pages before found", told)
	if told < 1000 {
		t.Errorf("only %d pages before found", told)
	}
}

// samePos reports whether a and b are the same position (both nil: the
// start).
func samePos(a, b *Pos) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}
