package views

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// synthReplica builds a replica of n listings with realistic shapes
// (power-law sizes, categories, topics, ratings, growth bases, a sparkline)
// without any I/O, for benchmarks.
func synthReplica(n int) *Replica { return synthReplicaShares(n, nil) }

// realShares is each store's share of the five stores' listings (the
// seeder's --shares real: apple 44.6%, googleplay 49.3%, chrome 4.4%,
// firefox 0.93%, edge 0.71%), indexed by Store.
var realShares = []float64{Chrome: 0.0445, Edge: 0.0071, Firefox: 0.0093, Apple: 0.4462, GooglePlay: 0.4929}

// synthReplicaShares is synthReplica with listings spread over the stores
// by shares (indexed by Store; nil: evenly).
func synthReplicaShares(n int, shares []float64) *Replica {
	r := rand.New(rand.NewPCG(1, 2))
	ref := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	in := NewInterner()
	b := NewReplicaBuilder(n)
	var spark []SparkPoint
	for i := range n {
		s := Store(r.IntN(NumStores))
		if shares != nil {
			x := r.Float64()
			for s = 0; int(s) < len(shares)-1 && x >= shares[s]; s++ {
				x -= shares[s]
			}
		}
		l := Listing{Store: s, ID: fmt.Sprintf("%032x", r.Uint64()^uint64(i)), Name: "Listing " + fmt.Sprint(i),
			Category:  in.String(fmt.Sprintf("Category %d", int(math.Pow(r.Float64(), 2)*15))),
			FirstSeen: ref.Add(-time.Duration(r.IntN(400*24)) * time.Hour).Unix(),
			ReadAt:    ref.Add(-time.Duration(r.IntN(72)) * time.Hour).Unix(), Version: "1.2.3",
			Updated: DayOf(ref) - Day(r.IntN(2000))}
		if r.Float64() < 0.05 {
			l.Delisted = ref.Add(-time.Duration(r.IntN(100*24)) * time.Hour).Unix()
		}
		size := int64(3 / math.Pow(1-r.Float64(), 1/0.75))
		if s == Apple {
			l.SetRatingCount(size, true)
		} else {
			l.SetUsage(size, true)
			if r.Float64() < 0.8 {
				l.SetRatingCount(size/50, true)
			}
		}
		if r.Float64() < 0.8 {
			l.SetRating(1+4*r.Float64(), true)
		}
		l.Topics = in.Strings([]string{fmt.Sprintf("topic-%d", r.IntN(40))})
		if s.ReadsManifests() {
			l.Permissions = in.Strings([]string{"storage", fmt.Sprintf("perm-%d", r.IntN(30))})
			l.ManifestVersion, l.AccessLevel = 3, uint8(1+r.IntN(4))
		}
		for _, w := range Windows {
			if r.Float64() < 0.9 {
				l.Hist.SetSizeBase(w, Base{Value: size * int64(80+r.IntN(40)) / 100, At: l.ReadAt - int64(w.Days())*86400})
			}
		}
		l.Hist.SetClimbBase(Base{Value: size * int64(80+r.IntN(40)) / 100, At: ref.Add(-8 * 24 * time.Hour).Unix()})
		spark = spark[:0]
		for d := 0; d < SparkDays; d += 1 + r.IntN(3) {
			spark = append(spark, SparkPoint{DayOf(ref) - Day(SparkDays-d), size + int64(d)})
		}
		l.Hist.SetSparkline(EncodeSparkline(spark))
		b.Add(&l)
	}
	return b.Build(ReplicaInfo{ReadingsMark: ref, ClimbAt: ref.Add(-7 * 24 * time.Hour), HasHistory: true})
}

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
	r := synthReplica(n)
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
	r := synthReplicaShares(n, realShares)
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
	r := synthReplicaShares(n, realShares)
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
