package legacy

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// BenchmarkLegacy1M times uncached /api/extensions work on a 1M-listing
// replica: the query (filters, total, page) plus encoding the page's rows,
// for representative filter and sort combinations, and reports p50 and p99.
func BenchmarkLegacy1M(b *testing.B) {
	r := replicatest.Synth(1_000_000, nil)
	f := figures.Build(r, 0).Listings()
	today := views.DayOf(r.Info().ReadingsMark)
	s0, s2 := views.Chrome, views.Firefox
	cat := "Category 3"
	perm := "perm-7"
	lo := 4.0
	var minRC int64 = 100
	day := today - 200
	minV := "1.2"
	yes := true
	queries := map[string]listq.Query{
		"default":           {},
		"platform":          {Store: &s2},
		"category+rating":   {Store: &s0, Category: &cat, MinRating: &lo, Sort: listq.SortRating},
		"permission+access": {Permission: &perm, HostAccessAll: true, Sort: listq.SortAccess},
		"growth7d":          {Sort: listq.SortGrowth7d},
		"growthpct30d asc":  {Sort: listq.SortGrowthPct30d, Asc: true},
		"name asc":          {Sort: listq.SortName, Asc: true},
		"updated+version":   {UpdatedAfter: &day, MinVersion: &minV, Sort: listq.SortUpdated},
		"delisted":          {IncludeDelisted: true, MinRatingCount: &minRC, Rated: &yes},
		"q name (2 chars)":  {Q: "li"},
		"q description":     {Q: "listing 99"},
		"deep page":         {Page: 2000, PageSize: 200},
		"pageSize 200":      {PageSize: 200, Sort: listq.SortRatingCount},
		"csv 1000 rows":     {PageSize: 1000, Sort: listq.SortName},
	}
	names := make([]string, 0, len(queries))
	for n := range queries {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		q := queries[name]
		if q.Page == 0 {
			q.Page = 1
		}
		if q.PageSize == 0 {
			q.PageSize = 50
		}
		b.Run(name, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				total, ls, _ := f.Page(&q)
				rows := make([]document.LegacyRow, len(ls))
				for i, l := range ls {
					rows[i] = document.NewLegacyRow(l, today)
				}
				if q.PageSize == 1000 { // the CSV export: every row as 26 text fields
					var buf bytes.Buffer
					w := csv.NewWriter(&buf)
					for _, r := range rows {
						rec := make([]string, 0, 26)
						rec = append(rec, r.ID, r.N, r.D, r.C, r.V, r.IC, r.DS, fmt.Sprint(r.I), fmt.Sprint(r.R))
						for len(rec) < 26 {
							rec = append(rec, fmt.Sprint(r.G7))
						}
						w.Write(rec)
					}
					w.Flush()
				} else if _, err := answer.JSON(&legacyPage{Total: total, Page: q.Page, PageSize: q.PageSize, Rows: rows}); err != nil {
					b.Fatal(err)
				}
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			p := func(q float64) float64 { return float64(times[int(q*float64(len(times)-1))].Microseconds()) / 1000 }
			b.ReportMetric(p(0.5), "p50-ms")
			b.ReportMetric(p(0.99), "p99-ms")
		})
	}
}
