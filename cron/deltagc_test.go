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

// deltaSource gives a follower one delta from base to next, read as
// cron/fleet reads one, and records the collector's GOGC while it reads.
type deltaSource struct {
	base, next *replica.Replica
	gcInRead   int
	delta      bool
}

func (s *deltaSource) Fetch(_ context.Context, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	bd := replica.DigestOf(s.base, 0)
	var buf bytes.Buffer
	if _, err := replica.WriteDelta(&buf, s.base, bd, s.next, 0, replica.DigestOf(s.next, 0)); err != nil {
		return nil, 0, "", err
	}
	delta := o.Delta
	o.Delta = func(n int) { s.delta = true; delta(n) }
	r, snapshots, _, err := replica.ReadDelta(&buf, s.base, bd, o)
	s.gcInRead = debug.SetGCPercent(-1)
	debug.SetGCPercent(s.gcInRead)
	return r, snapshots, `"next"`, err
}

// TestDeltaGCUntilThePublish checks that a follower's delta is read,
// applied and built with no collection by GOGC (memory.DeltaGC, set at
// the delta's header) and that the collector's settings are those before
// once its figures are published, whatever the GOGC before (a setting
// restored out of order would leave GOGC off).
func TestDeltaGCUntilThePublish(t *testing.T) {
	base := replicatest.Synth(2000, nil)
	next := replicatest.Refreshed(base, 7)
	for _, percent := range []int{100, 10} {
		defer debug.SetGCPercent(debug.SetGCPercent(percent))
		limit := debug.SetMemoryLimit(-1)
		pub := &views.Published[served.State]{}
		pub.Publish(&served.State{Replica: base, Figures: figures.Build(base, 0)})
		v := NewViews(nil, pub, slog.New(slog.DiscardHandler))
		v.memory = func() (int64, int64) { return 1 << 30, 1 << 30 } // no room for a spare: none made beside the test
		src := &deltaSource{base: base, next: next}
		v.FollowFrom(src)
		if err := v.follow(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !src.delta || src.gcInRead != -1 {
			t.Errorf("GOGC %d: a delta read (%v) with GOGC %d, want off", percent, src.delta, src.gcInRead)
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
