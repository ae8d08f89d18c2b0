package missgate

import (
	"context"
	"math"
	"runtime/metrics"
	"time"
)

// admit starts a miss of c at now, in the turn it holds.
func (g *Gate) admit(c *caller, now time.Time) func() {
	g.admitted.Inc()
	return func() { g.leave(c, now) }
}

// Contended reports whether other work waited for a core recently, at
// now: then misses take only their share.
func (g *Gate) Contended(now time.Time) bool { return now.UnixNano() < g.contended.Load() }

// minCached is the fewest cached answers a sample of Watch must have
// served to count: cached answers at 200 a second or more. A rare one
// among misses (a repeated query, a health check) does not hand the CPU
// back to the share for contendedFor.
const minCached = 2

// contendedFor is how long the share applies after cached answers were
// last seen delayed.
const contendedFor = 500 * time.Millisecond

// Watch samples Go's scheduler latencies every 10 ms until ctx ends: when
// cached answers were served in a sample (SetCached; at least minCached
// of them) and more than 1% of
// the goroutines that ran in it waited 1 ms or more for a core, the
// cached answers waited too: misses take only their share for the next
// contendedFor. Misses that wait only on misses (no cached answer served)
// never make the CPU contended. Without SetCached every sample counts;
// without Watch, the share always applies.
func (g *Gate) Watch(ctx context.Context) {
	g.contended.Store(0)
	sample := []metrics.Sample{{Name: "/sched/latencies:seconds"}}
	var last []uint64
	var lastCached uint64
	if g.cached != nil {
		lastCached = g.cached()
	}
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindFloat64Histogram {
			g.contended.Store(math.MaxInt64) // no such metric: the share always applies
			return
		}
		served := true
		if g.cached != nil {
			n := g.cached()
			served, lastCached = n-lastCached >= minCached, n
		}
		h := sample[0].Value.Float64Histogram()
		if len(last) == len(h.Counts) && served && late(h, last) {
			g.contended.Store(time.Now().Add(contendedFor).UnixNano())
		}
		last = append(last[:0], h.Counts...)
	}
}

// late reports whether more than 1% of the goroutines scheduled since
// the counts last waited 1 ms or more for a core.
func late(h *metrics.Float64Histogram, last []uint64) bool {
	var all, late uint64
	for i, c := range h.Counts {
		d := c - last[i]
		all += d
		if h.Buckets[i] >= 0.001 {
			late += d
		}
	}
	return all > 0 && late*100 > all
}
