package replica_test

import (
	"bytes"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"

	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/viewstest"
)

// BenchmarkDelta measures a fleet's state sent as what changed, on a
// synthetic replica of 100,000 listings with the stores' real shares
// (EDGE_BENCH_LISTINGS says otherwise) and a refresh that read a new
// crawl of 1 listing in 288 (a five-minute refresh of a day's crawl):
// the leader's digest of a state and its delta written (the listings
// compared), the follower's delta applied (its digest checked), and the
// whole state read, which the delta replaces. It reports the delta's
// bytes against the whole state's.
func BenchmarkDelta(b *testing.B) {
	n := 100_000
	if v, err := strconv.Atoi(os.Getenv("EDGE_BENCH_LISTINGS")); err == nil {
		n = v
	}
	base := replicatest.Synth(n, viewstest.RealShares)
	next := replicatest.Refreshed(base, 288)
	baseDigest, digest := replica.DigestOf(base, 1), replica.DigestOf(next, 2)
	var whole, delta bytes.Buffer
	if _, err := replica.WriteSnapshot(&whole, next, 2); err != nil {
		b.Fatal(err)
	}
	st, err := replica.WriteDelta(&delta, base, baseDigest, next, 2, digest)
	if err != nil {
		b.Fatal(err)
	}
	report := func(b *testing.B) {
		b.ReportMetric(float64(delta.Len()), "delta-B")
		b.ReportMetric(float64(whole.Len()), "whole-B")
		b.ReportMetric(100*float64(delta.Len())/float64(whole.Len()), "delta-%")
		b.ReportMetric(float64(st.Changed), "changed")
	}
	// The digest of a state hashed whole (a whole state read, a load),
	// and of a refresh's merge from the state before, whose groups the
	// leader computed for that state's digest (only the groups the
	// refresh touched hashed again): a leader's digest of each state.
	b.Run("digest", func(b *testing.B) {
		for b.Loop() {
			replica.DigestWhole(next, 2)
		}
	})
	b.Run("digest-merged", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			ch := replica.NewBuilder(0)
			for i := 0; i < next.Len(); i += 288 { // the listings Refreshed changed
				ch.Add(next.At(int32(i)))
			}
			merged := replica.Merge(base, ch, next.Info())
			b.StartTimer()
			if replica.DigestOf(merged, 2) != digest {
				b.Fatal("the merge's digest is not the state's")
			}
		}
	})
	b.Run("write", func(b *testing.B) {
		for b.Loop() {
			var out bytes.Buffer
			if _, err := replica.WriteDelta(&out, base, baseDigest, next, 2, digest); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	// The apply on pages the process kept (the replaced state's, as a
	// follower leaves them after a delta: builder.Builder.follow) and on pages
	// the system gives again (after debug.FreeOSMemory): a page's first
	// write costs a fault, 16 µs a 4 KiB page on a VM whose host takes
	// back the pages its guest frees (bench/README.md).
	for _, c := range []struct {
		name    string
		collect func()
	}{{"apply-kept-pages", runtime.GC}, {"apply-new-pages", debug.FreeOSMemory}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				c.collect()
				b.StartTimer()
				if _, _, _, err := replica.ReadDelta(bytes.NewReader(delta.Bytes()), base, baseDigest, replica.ReadOptions{Generation: 3}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("apply", func(b *testing.B) {
		for b.Loop() {
			if _, _, _, err := replica.ReadDelta(bytes.NewReader(delta.Bytes()), base, baseDigest, replica.ReadOptions{Generation: 3}); err != nil {
				b.Fatal(err)
			}
		}
		report(b)
	})
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := replica.ReadSnapshot(bytes.NewReader(whole.Bytes()), replica.ReadOptions{Generation: 3, Prev: base}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
