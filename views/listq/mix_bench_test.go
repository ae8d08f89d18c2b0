package listq

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/viewstest"
)

// BenchmarkQueryMix5M asks a synthetic replica with the stores' real
// shares (5M listings unless EDGE_BENCH_LISTINGS says otherwise) the query
// mix of bench/listings, without HTTP: every store, sort, order and filter
// set of /api/v1/listings three cursor pages deep, and every platform,
// sort and filter set of /api/extensions on pages 1 and 3. It reports the
// p50 and p99 of each API and logs the slowest queries.
func BenchmarkQueryMix5M(b *testing.B) {
	n := 5_000_000
	if v, err := strconv.Atoi(os.Getenv("EDGE_BENCH_LISTINGS")); err == nil {
		n = v
	}
	f := build(replicatest.Synth(n, viewstest.RealShares))
	v1, legacy := queryMix(f)
	for b.Loop() {
		for _, s := range []*mixSet{v1, legacy} {
			s.run(f)
		}
	}
	for _, s := range []*mixSet{v1, legacy} {
		b.ReportMetric(s.pct(0.5), s.name+"-p50-ms")
		b.ReportMetric(s.pct(0.99), s.name+"-p99-ms")
		fmt.Fprintln(os.Stderr, s.slowest(8))
	}
}

type mixQuery struct {
	kind  string
	q     Query
	pages int // v1: pages followed by cursor; 0 for a legacy query
}

type mixSet struct {
	name    string
	queries []mixQuery
	times   []time.Duration
	which   []string
}

func (s *mixSet) run(f *Engine) {
	for _, m := range s.queries {
		q := m.q
		if m.pages == 0 {
			start := time.Now()
			f.Page(&q)
			s.add(m, &q, time.Since(start))
			continue
		}
		var after *Pos
		for range m.pages {
			start := time.Now()
			_, last, more, _ := f.List(&q, after)
			s.add(m, &q, time.Since(start))
			if !more {
				break
			}
			after = &last
		}
	}
}

func (s *mixSet) add(m mixQuery, q *Query, d time.Duration) {
	s.times = append(s.times, d)
	st := "all"
	if q.Store != nil {
		st = q.Store.String()
	}
	s.which = append(s.which, fmt.Sprintf("%v %s %s sort=%s asc=%v page=%d", d.Round(10*time.Microsecond), m.kind, st,
		q.Sort, q.Asc, q.Page))
}

func (s *mixSet) pct(p float64) float64 {
	ts := slices.Clone(s.times)
	slices.Sort(ts)
	return float64(ts[min(len(ts)-1, int(float64(len(ts))*p))].Microseconds()) / 1000
}

func (s *mixSet) slowest(k int) string {
	idx := make([]int, len(s.times))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return int(s.times[b] - s.times[a]) })
	out := s.name + " slowest:"
	for _, i := range idx[:min(k, len(idx))] {
		out += "\n  " + s.which[i]
	}
	return out
}

// queryMix returns the queries of bench/listings for f's categories and tags.
func queryMix(f *Engine) (v1, legacy *mixSet) {
	v1, legacy = &mixSet{name: "v1"}, &mixSet{name: "legacy"}
	stores := []*views.Store{nil}
	for _, s := range views.Stores {
		stores = append(stores, &s)
	}
	cat := "Category 3" // every store has it (synthReplica)
	tag1, tag0 := "topic-13", "topic-0"
	minS, maxS, ten := int64(100), int64(50_000), int64(10)
	sorts := []Sort{SortInstalls, SortRatingCount, SortRating, SortGrowth7d,
		SortGrowthPct7d, SortGrowth30d, SortRatingGrowth7d, SortUpdated, SortCreated,
		SortFirstSeen, SortName, SortRankClimb}
	type filter struct {
		kind      string
		set       func(q *Query)
		needStore bool
	}
	filters := []filter{
		{"no filter", func(*Query) {}, false},
		{"category", func(q *Query) { q.Category = &cat }, true},
		{"tag", func(q *Query) { q.Topic = &tag1 }, false},
		{"minSize+maxSize", func(q *Query) { q.MinSize, q.MaxSize = &minS, &maxS }, true},
		{"tag+category+minSize", func(q *Query) { q.Topic, q.Category, q.MinSize = &tag0, &cat, &ten }, true},
	}
	for _, st := range stores {
		for _, srt := range sorts {
			if srt == SortRankClimb && st == nil {
				continue
			}
			for _, asc := range []bool{false, true} {
				for _, fl := range filters {
					if fl.needStore && st == nil {
						continue
					}
					for _, limit := range []int{50, 100} {
						q := Query{Store: st, Sort: srt, Asc: asc, PageSize: limit}
						fl.set(&q)
						v1.queries = append(v1.queries, mixQuery{fl.kind, q, 3})
					}
				}
			}
		}
	}
	lo, hi, four := 100.0, 50_000.0, 4.0
	yes := true
	after := views.DayOf(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	two := "2"
	lfilters := []filter{
		{"no filter", func(*Query) {}, false},
		{"category", func(q *Query) { q.Category = &cat }, true},
		{"minInstalls+maxInstalls", func(q *Query) { q.MinInstalls, q.MaxInstalls = &lo, &hi }, false},
		{"minRating+rated", func(q *Query) { q.MinRating, q.Rated = &four, &yes }, false},
		{"updatedAfter+minVersion", func(q *Query) { q.UpdatedAfter, q.MinVersion = &after, &two }, false},
	}
	for _, st := range stores {
		for _, srt := range []string{"installs", "name", "rating", "ratingcount", "updated", "firstseen", "growth7d", "growthpct30d"} {
			for _, fl := range lfilters {
				if fl.needStore && st == nil {
					continue
				}
				for _, page := range []int{1, 3} {
					q := Query{Store: st, Sort: legacySort(srt), Page: page, PageSize: 50}
					fl.set(&q)
					legacy.queries = append(legacy.queries, mixQuery{fl.kind, q, 0})
				}
			}
		}
	}
	return v1, legacy
}

// BenchmarkScan5M times the full scans of legacy queries of every store
// on the synthetic 5M replica: the flag word and one or two columns.
func BenchmarkScan5M(b *testing.B) {
	n := 5_000_000
	if v, err := strconv.Atoi(os.Getenv("EDGE_BENCH_LISTINGS")); err == nil {
		n = v
	}
	f := build(replicatest.Synth(n, viewstest.RealShares))
	lo, hi, four := 100.0, 50_000.0, 4.0
	yes := true
	after := views.DayOf(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	one := "1"
	for _, c := range []struct {
		name string
		q    Query
	}{
		{"installs", Query{MinInstalls: &lo, MaxInstalls: &hi}},
		{"rating+rated", Query{MinRating: &four, Rated: &yes}},
		{"updated+version", Query{UpdatedAfter: &after, MinVersion: &one}},
	} {
		b.Run(c.name, func(b *testing.B) {
			q := c.q
			q.Page, q.PageSize, q.Sort = 1, 50, SortFirstSeen
			for b.Loop() {
				f.Page(&q)
			}
		})
	}
}

func legacySort(name string) Sort { s, _ := LegacySort(name); return s }

// BenchmarkPageExtras5M times what the listings' page asks beyond the
// API's own query, over the v1 queries of BenchmarkQueryMix5M on the same
// replica: a page of the query from its third page's cursor (List, the
// API's cost), the page before it (PageBefore from that page's first
// row) and the count of the whole query (Count). It reports the p50 and
// p99 of each, in milliseconds.
func BenchmarkPageExtras5M(b *testing.B) {
	n := 5_000_000
	if v, err := strconv.Atoi(os.Getenv("EDGE_BENCH_LISTINGS")); err == nil {
		n = v
	}
	f := build(replicatest.Synth(n, viewstest.RealShares))
	v1, _ := queryMix(f)
	list, before, count := &mixSet{name: "list"}, &mixSet{name: "before"}, &mixSet{name: "count"}
	for b.Loop() {
		for _, m := range v1.queries {
			q := m.q
			var after *Pos
			for range 2 { // to page 3
				_, last, more, _ := f.List(&q, after)
				if !more {
					break
				}
				after = &last
			}
			start := time.Now()
			page, _, _, _ := f.List(&q, after)
			list.add(m, &q, time.Since(start))
			if len(page) > 0 {
				start = time.Now()
				f.PageBefore(&q, page[0])
				before.add(m, &q, time.Since(start))
			}
			start = time.Now()
			f.Count(&q)
			count.add(m, &q, time.Since(start))
		}
	}
	for _, s := range []*mixSet{list, before, count} {
		b.ReportMetric(s.pct(0.5), s.name+"-p50-ms")
		b.ReportMetric(s.pct(0.99), s.name+"-p99-ms")
		fmt.Fprintln(os.Stderr, s.slowest(5))
	}
}
