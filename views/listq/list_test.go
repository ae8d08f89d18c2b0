package listq

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// bruteList orders every match of q the obvious way, for comparison:
// values largest first (names and categories Z to A), ties by store and
// id, all reversed for ascending; listings without a value last, by store
// and id.
func bruteList(f *Engine, q *Query) []string {
	r := f.replica
	var rows []bruteRow
	for i := range r.All() {
		if q.match(&r.All()[i]) {
			rows = append(rows, bruteRowOf(f, i, q.Sort))
		}
	}
	sortBrute(rows, q.Asc)
	var out []string
	for _, rw := range rows {
		out = append(out, r.All()[rw.idx].Store.String()+"/"+r.All()[rw.idx].ID)
	}
	return out
}

// bruteRow is listing idx's value for one sort, for the brute-force
// orders.
type bruteRow struct {
	idx  int
	key  int64
	name string
	has  bool
}

// bruteRowOf reads listing i's value for sort (names and categories as
// strings, every other sort by its key).
func bruteRowOf(f *Engine, i int, sort Sort) bruteRow {
	l := &f.ls[i]
	switch sort {
	case SortName:
		return bruteRow{idx: i, name: l.Name, has: true}
	case SortCategory:
		return bruteRow{idx: i, name: l.Category, has: true}
	}
	k, has := f.sortKey(i, sort)
	return bruteRow{idx: i, key: k, has: has}
}

// sortBrute orders rows with a comparison sort: values largest first
// (strings Z to A), ties by index, all reversed for asc; rows without a
// value last, by index.
func sortBrute(rows []bruteRow, asc bool) {
	slices.SortStableFunc(rows, func(a, b bruteRow) int {
		if a.has != b.has {
			if a.has {
				return -1
			}
			return 1
		}
		if !a.has {
			return cmp.Compare(a.idx, b.idx)
		}
		c := cmp.Or(strings.Compare(b.name, a.name), cmp.Compare(b.key, a.key), cmp.Compare(a.idx, b.idx))
		if asc {
			c = -c
		}
		return c
	})
}

func pageAll(f *Engine, q *Query) []string { return pageAllWith(f, q, f.cols.strategy) }

// pageAllWith pages through q by cursor with a strategy, or with
// alternate, walking, sorting and listing in turn (a cursor of one is
// resumed by another).
func pageAllWith(f *Engine, q *Query, strategy int) []string {
	defer func(s int) { f.cols.strategy = s }(f.cols.strategy)
	var out []string
	var after *Pos
	for n := 0; ; n++ {
		f.cols.strategy = strategy
		if strategy == alternate {
			f.cols.strategy = []int{walkAlways, sortAlways, listAlways}[n%3]
		}
		page, last, more, _ := f.List(q, after)
		for _, l := range page {
			out = append(out, l.Store.String()+"/"+l.ID)
		}
		if !more {
			return out
		}
		after = &last
	}
}

func TestListCursorPagingMatchesBruteForce(t *testing.T) {
	r := replicatest.Synth(3000, nil)
	for i := range r.All() {
		r.All()[i].Name = []string{"Alpha", "alpha", "Beta Tab", "Zulu", ""}[i%5]
		if i%4 == 0 {
			r.All()[i].Created = views.DayOf(r.Info().ReadingsMark) - views.Day(i%300)
		}
	}
	r = replica.New(r.All(), r.Info()) // a replica is immutable: build a new one from the edited listings
	f := build(r)
	s1, s3 := views.Edge, views.Apple
	var lo, hi int64 = 10, 5000
	topic := "topic-3"
	cat := "Category 0"
	for _, base := range []Query{
		{},
		{Store: &s1},
		{Store: &s3, MinSize: &lo, MaxSize: &hi},
		{Store: &s3, MinSize: &hi, MaxSize: &lo}, // an empty range
		{Topic: &topic},
		{Topic: &topic, Store: &s1},
		{Topic: &topic, Category: &cat},
		{Topic: &topic, Category: &cat, Store: &s1},
		{Category: &cat, Store: &s3},
		{Category: &cat, Q: "TAB", NameOnly: true},
	} {
		for _, sort := range []Sort{SortSize, SortCreated, SortRankClimb, SortInstalls, SortName,
			SortRating, SortGrowth7d, SortGrowthPct7d, SortUpdated} {
			for _, asc := range []bool{false, true} {
				q := base
				q.Sort, q.Asc, q.PageSize, q.Page = sort, asc, 7, 1
				want := bruteList(f, &q)
				for _, strategy := range []int{byCost, walkAlways, sortAlways, listAlways, alternate} {
					if got := pageAllWith(f, &q, strategy); !slices.Equal(got, want) {
						t.Fatalf("query %+v sort %d asc %v strategy %d: paged %d rows, want %d\n got %v\nwant %v",
							base, sort, asc, strategy, len(got), len(want), head(got), head(want))
					}
				}
			}
		}
	}
}

// alternate is a test strategy: walk, sort and list, page by page in turn.
const alternate = -1

func head(s []string) []string { return s[:min(len(s), 12)] }

// TestListCursorSurvivesRebuild resumes a cursor on figures rebuilt from a
// replica that lost a listing before the cursor and gained one after it.
func TestListCursorSurvivesRebuild(t *testing.T) {
	r := replicatest.Synth(500, nil)
	f := build(r)
	s := views.Firefox
	q := Query{Store: &s, Sort: SortSize, PageSize: 5, Page: 1}
	first, last, more, _ := f.List(&q, nil)
	if !more || len(first) != 5 {
		t.Fatalf("first page %d rows, more %v", len(first), more)
	}
	all := pageAll(f, &q)
	// Rebuild without the first row of the first page.
	var kept []views.Listing
	for _, l := range r.All() {
		if !(l.Store == s && l.ID == first[0].ID) {
			kept = append(kept, l)
		}
	}
	f2 := build(replica.New(kept, r.Info()))
	second, _, _, _ := f2.List(&q, &last)
	var got []string
	for _, l := range second {
		got = append(got, l.Store.String()+"/"+l.ID)
	}
	if !slices.Equal(got, all[5:10]) {
		t.Errorf("after a rebuild the next page is %v, want %v", got, all[5:10])
	}
}

// TestListLazyAndBitmapAgree covers both ways List tests listings: one by
// one as the walk meets them (common queries) and, once a selective query
// has tested lazyTests listings without filling its page, by the bitmap.
func TestListLazyAndBitmapAgree(t *testing.T) {
	r := replicatest.Synth(lazyTests+8000, nil)
	f := build(r)
	// The 12 smallest sizes of a store: largest first, they are the last
	// listings of the walk, found only once List falls back to the bitmap.
	store := r.All()[0].Store
	var sizes []int64
	for i := range r.All() {
		if l := &r.All()[i]; l.Store == store && l.Live() {
			if n, ok := l.Size(); ok {
				sizes = append(sizes, n)
			}
		}
	}
	slices.Sort(sizes)
	small := sizes[11]
	for _, c := range []struct {
		q    Query
		sort Sort
	}{
		{Query{}, SortSize}, // lazy: pages fill at once
		{Query{}, SortName}, // lazy
		{Query{Store: &store}, SortRating},
		{Query{Store: &store, MaxSize: &small}, SortSize}, // bitmap after lazyTests
		{Query{Store: &store, MaxSize: &small}, SortName},
		{Query{Q: "listing 1"}, SortRating},                  // text: lazy, the page fills at once
		{Query{Q: "listing 399", Store: &store}, SortSize},   // text: the index after lazyTextTests
		{Query{Q: "LISTING 3", NameOnly: true}, SortCreated}, // text, names only
		{Query{Q: "listing 123"}, SortRating},                // a rare word in every store: its matches sorted
		{Query{Q: "listing 77", Asc: true}, SortSize},        // the same, ascending
		{Query{Q: "listing 2", Store: &store}, SortGrowth7d},
	} {
		q := c.q
		q.Sort, q.PageSize, q.Page = c.sort, 7, 1
		want := bruteList(f, &q)
		if len(want) < 12 {
			t.Fatalf("query %+v matches %d listings", c.q, len(want))
		}
		if got := pageAll(f, &q); !slices.Equal(got, want) {
			t.Fatalf("query %+v sort %d: paged %d rows, want %d\n got %v\nwant %v", c.q, c.sort, len(got), len(want), head(got), head(want))
		}
	}
}

// TestListTextKeepsItsBudget: text tested listing by listing, before the
// index, stops at the query's deadline too, and says the page is partial.
func TestListTextKeepsItsBudget(t *testing.T) {
	f := build(replicatest.Synth(3000, nil))
	q := Query{Q: "listing", Sort: SortSize, PageSize: 10, Page: 1}
	page, _, more, partial := f.List(&q, nil)
	if len(page) != 10 || !more || partial {
		t.Fatalf("without a deadline: %d rows, more %v, partial %v", len(page), more, partial)
	}
	q.Deadline = time.Now().Add(-time.Second)
	page, _, more, partial = f.List(&q, nil)
	if !partial || more || len(page) != 0 {
		t.Fatalf("past its deadline: %d rows, more %v, partial %v; want a partial page with no next one", len(page), more, partial)
	}
}

// TestCountMatchesBruteForce: Count counts every listing List lists, over
// every page, for filters, topics, text and flags alone.
func TestCountMatchesBruteForce(t *testing.T) {
	r := replicatest.Synth(3000, nil)
	f := build(r)
	s1, s3 := views.Edge, views.Apple
	var lo, hi int64 = 10, 5000
	topic, cat, none := "topic-3", "Category 0", "no-such-topic"
	yes := true
	for _, q := range []Query{
		{},
		{Store: &s1},
		{Featured: &yes},
		{Store: &s3, MinSize: &lo, MaxSize: &hi},
		{Store: &s3, MinSize: &hi, MaxSize: &lo},
		{Topic: &topic},
		{Topic: &none},
		{Topic: &topic, Category: &cat, Store: &s1},
		{Category: &cat, Q: "listing 1"},
		{Q: "listing 77", NameOnly: true},
		{IncludeDelisted: true},
		{DelistedOnly: true},
	} {
		q.Sort, q.PageSize, q.Page = SortSize, 50, 1
		got, partial := f.Count(&q)
		if want := len(bruteList(f, &q)); got != want || partial {
			t.Errorf("query %+v: counted %d (partial %v), lists %d", q, got, partial, want)
		}
	}
}
