package seed

import (
	"testing"
	"time"
)

// BenchmarkGenerate measures generation alone (no ClickHouse): rows/s of
// one core for a 365-day history.
func BenchmarkGenerate(b *testing.B) {
	o := Options{Seed: 1, Listings: 1 << 30, Days: 365, ReviewsPerListing: 5,
		End: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	g := NewGenerator(o)
	var rows Rows
	total := 0
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if i%1000 == 0 {
			total += rows.Len()
			rows.reset()
		}
		g.Append(&rows, i)
	}
	total += rows.Len()
	b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(total)/float64(b.N), "rows/listing")
}
