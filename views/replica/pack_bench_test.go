package replica

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/edge-stats/edge/views/viewstest"
)

// BenchmarkCollect5M measures a full collection (runtime.GC) with a
// synthetic replica live, 5M listings with the stores' real shares unless
// EDGE_BENCH_LISTINGS says otherwise, its ids, slugs, icons and
// developers made one heap object each, as the loader reads them. It
// reports the heap's objects per listing: what the collector's mark must
// find, and what the packs (pack.go) keep few. A mark of this length
// runs beside the requests every few thousand uncached answers.
func BenchmarkCollect5M(b *testing.B) {
	n := 5_000_000
	if v, err := strconv.Atoi(os.Getenv("EDGE_BENCH_LISTINGS")); err == nil {
		n = v
	}
	r := synthReplica(n, viewstest.RealShares)
	nb := BuilderFrom(r)
	for i := range nb.listings {
		l := &nb.listings[i]
		l.Icon = fmt.Sprintf("https://icons.example/%s=s128", l.ID)
		l.Slug = fmt.Sprintf("listing-%d", i)
		l.Developer = fmt.Sprintf("Developer %d", i/3)
	}
	r = nb.Build(r.Info())
	runtime.GC()
	b.ResetTimer()
	for b.Loop() {
		runtime.GC()
	}
	b.StopTimer()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	runtime.KeepAlive(r)
	b.ReportMetric(float64(m.HeapObjects)/float64(n), "objects/listing")
	b.ReportMetric(float64(m.HeapAlloc)/float64(n), "heap-B/listing")
}
