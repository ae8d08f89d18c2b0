package cron

import (
	"bytes"
	"context"
	"log/slog"
	"runtime/debug"
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/served"
)

// deltaSource gives a follower a chain of deltas through states, read as
// cron/fleet reads them (one after another, with the same options), and
// records the collector's GOGC while it reads.
type deltaSource struct {
	states   []*replica.Replica // the one held first
	gcInRead int
	deltas   int
}

func (s *deltaSource) Fetch(_ context.Context, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	delta := o.Delta
	o.Delta = func(n int) { s.deltas++; delta(n) }
	r := s.states[0]
	for _, next := range s.states[1:] {
		bd := replica.DigestOf(r, 0)
		var buf bytes.Buffer
		if _, err := replica.WriteDelta(&buf, r, bd, next, 0, replica.DigestOf(next, 0)); err != nil {
			return nil, 0, "", err
		}
		var err error
		if r, _, _, err = replica.ReadDelta(&buf, r, bd, o); err != nil {
			return nil, 0, "", err
		}
	}
	s.gcInRead = debug.SetGCPercent(-1)
	debug.SetGCPercent(s.gcInRead)
	return r, 0, `"next"`, nil
}

// TestDeltaGCUntilThePublish checks that a follower's delta, or chain
// of two, is read, applied and built with no collection by GOGC
// (memory.DeltaGC, set at the first delta's header) and that the
// collector's settings are those before once its figures are published,
// whatever the GOGC before (a setting restored out of order, or set
// again by a chain's second delta, would leave GOGC off).
func TestDeltaGCUntilThePublish(t *testing.T) {
	base := replicatest.Synth(2000, nil)
	mid := replicatest.Refreshed(base, 7)
	next := replicatest.Refreshed(mid, 5)
	for _, c := range []struct {
		percent int
		states  []*replica.Replica
	}{{100, []*replica.Replica{base, next}}, {10, []*replica.Replica{base, next}}, {100, []*replica.Replica{base, mid, next}}} {
		percent := c.percent
		defer debug.SetGCPercent(debug.SetGCPercent(percent))
		limit := debug.SetMemoryLimit(-1)
		pub := &views.Published[served.State]{}
		pub.Publish(&served.State{Replica: base, Figures: figures.Build(base, 0)})
		v := NewViews(nil, pub, slog.New(slog.DiscardHandler))
		v.memory = func() (int64, int64) { return 1 << 30, 1 << 30 } // no room for a spare: none made beside the test
		src := &deltaSource{states: c.states}
		v.FollowFrom(src)
		if err := v.follow(context.Background()); err != nil {
			t.Fatal(err)
		}
		if src.deltas != len(c.states)-1 || src.gcInRead != -1 {
			t.Errorf("GOGC %d: %d deltas read with GOGC %d, want %d with it off", percent, src.deltas, src.gcInRead, len(c.states)-1)
		}
		if got := pub.Load(); got.Replica.Len() != next.Len() || !got.Figures.Merged() {
			t.Errorf("GOGC %d: the delta's state was not published from the figures before", percent)
		}
		if got := debug.SetGCPercent(percent); got != percent {
			t.Errorf("GOGC %d after the delta's publish, want %d", got, percent)
		}
		if got := debug.SetMemoryLimit(-1); got != limit {
			t.Errorf("memory limit %d after the delta's publish, want %d", got, limit)
		}
	}
}
