package figures

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views/replica"
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
// says otherwise: the full build of a replica of the stores' real size
// (its bound and figures: bench/README.md, The real size).
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

// BenchmarkBuildAfterDelta measures a fleet follower's build after a
// delta (BuildFrom, from the figures it held) against the full build of
// the same state, on a synthetic replica with the stores' real shares,
// 5M listings unless EDGE_BENCH_LISTINGS says otherwise, and a refresh
// that read a new crawl of 1 listing in 288 (as BenchmarkDelta).
func BenchmarkBuildAfterDelta(b *testing.B) {
	n := 5_000_000
	if v, err := strconv.Atoi(os.Getenv("EDGE_BENCH_LISTINGS")); err == nil {
		n = v
	}
	base := replicatest.Synth(n, viewstest.RealShares)
	var delta bytes.Buffer
	bd, leaderState := replica.DigestOf(base, 0), replicatest.Refreshed(base, 288)
	if _, err := replica.WriteDelta(&delta, base, bd, leaderState, 0, replica.DigestOf(leaderState, 0)); err != nil {
		b.Fatal(err)
	}
	next, _, _, err := replica.ReadDelta(&delta, base, bd, replica.ReadOptions{Generation: 3})
	if err != nil {
		b.Fatal(err)
	}
	prev := Build(base, 0)
	// The round: from the leader's publish of the new state to the
	// follower's, less the delta's way between them (1.25 MB at 5M: 10
	// ms at 1 Gb/s). The leader names its state and writes the delta
	// from the one before; the follower applies it (its digest checked)
	// and builds its figures from the ones it held.
	b.Run("round", func(b *testing.B) {
		var spareTook, digest, write, apply, build time.Duration
		for b.Loop() {
			// The round before collected, its pages kept by the heap (as
			// a follower's builder.Builder.follow leaves them after a delta), and
			// the follower's spare listings made between the two deltas
			// (builder.Builder.follow, replica.Spare): not on the round's path,
			// nor is the collection its allocation starts, which ends in
			// the minutes between two deltas.
			runtime.GC()
			ts := time.Now()
			spare := replica.NewSpare(leaderState.Len() + leaderState.Len()/64)
			spare.Write()
			spareTook += time.Since(ts)
			// The leader's new state, merged from its refresh's
			// listings (its digest hashes only the groups they touch).
			ch := replica.NewBuilder(0)
			for i := 0; i < leaderState.Len(); i += 288 { // the listings Refreshed changed
				ch.Add(leaderState.At(int32(i)))
			}
			merged := replica.Merge(base, ch, leaderState.Info())
			runtime.GC()
			t0 := time.Now()
			d := replica.DigestOf(merged, 0)
			t1 := time.Now()
			var out bytes.Buffer
			if _, err := replica.WriteDelta(&out, base, bd, merged, 0, d); err != nil {
				b.Fatal(err)
			}
			t2 := time.Now()
			got, _, _, err := replica.ReadDelta(&out, base, bd, replica.ReadOptions{Generation: 4, Spare: spare})
			if err != nil {
				b.Fatal(err)
			}
			t3 := time.Now()
			if f := BuildFrom(prev, got, 0); !f.Merged() {
				b.Fatal("not built from the figures before")
			}
			digest, write, apply, build = digest+t1.Sub(t0), write+t2.Sub(t1), apply+t3.Sub(t2), build+time.Since(t3)
		}
		for _, m := range []struct {
			name string
			d    time.Duration
		}{{"follower-spare-s", spareTook}, {"leader-digest-s", digest}, {"leader-delta-s", write}, {"follower-apply-s", apply}, {"follower-build-s", build}} {
			b.ReportMetric(m.d.Seconds()/float64(b.N), m.name)
		}
	})
	leaderState = nil
	for _, c := range []struct {
		name  string
		build func() *Figures
	}{
		{"whole", func() *Figures { return Build(next, 0) }},
		{"from-before", func() *Figures { return BuildFrom(prev, next, 0) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			sums := map[string]time.Duration{}
			var names []string
			for b.Loop() {
				f := c.build()
				if f.Merged() != (c.name != "whole") {
					b.Fatalf("merged %v", f.Merged())
				}
				for _, p := range f.BuildPhases() {
					if _, ok := sums[p.Name]; !ok {
						names = append(names, p.Name)
					}
					sums[p.Name] += p.Took
				}
			}
			for _, name := range names {
				b.ReportMetric(sums[name].Seconds()/float64(b.N), strings.ReplaceAll(name, " ", "-")+"-s")
			}
		})
	}
}
