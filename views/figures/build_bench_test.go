package figures

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/viewstest"
)

func liveHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkBuild1M measures building every figure of a 1M-listing replica,
// and reports the heap of the replica and of the figures per listing.
func BenchmarkBuild1M(b *testing.B) {
	const n = 1_000_000
	before := liveHeap()
	r := replicatest.Synth(n, nil)
	replicaHeap := liveHeap() - before
	var f *Figures
	b.ResetTimer()
	for b.Loop() {
		f = Build(r, 0)
	}
	b.StopTimer()
	all := liveHeap() - before
	runtime.KeepAlive(f)
	b.ReportMetric(float64(replicaHeap)/n, "replica-B/listing")
	b.ReportMetric(float64(all-replicaHeap)/n, "figures-B/listing")
}

// BenchmarkBuild5M measures building every figure of a synthetic replica
// with the stores' real shares, 5M listings unless EDGE_BENCH_LISTINGS
// says otherwise: the full build of issue 20's goal (≤ 15 s).
func BenchmarkBuild5M(b *testing.B) {
	n := 5_000_000
	if v, err := strconv.Atoi(os.Getenv("EDGE_BENCH_LISTINGS")); err == nil {
		n = v
	}
	r := replicatest.Synth(n, viewstest.RealShares)
	b.ResetTimer()
	sums := map[string]time.Duration{}
	var names []string
	for b.Loop() {
		for _, p := range Build(r, 0).BuildPhases() {
			if _, ok := sums[p.Name]; !ok {
				names = append(names, p.Name)
			}
			sums[p.Name] += p.Took
		}
	}
	for _, name := range names {
		b.ReportMetric(sums[name].Seconds()/float64(b.N), strings.ReplaceAll(name, " ", "-")+"-s")
	}
}
