package builder

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"testing"
	"unsafe"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/served"
)

// deltaSource gives a follower a chain of deltas through states, read as
// fleet/exchange reads them (one after another, with the same options), and
// records the collector's GOGC while it reads.
type deltaSource struct {
	states    []*replica.Replica // the one held first
	gcInRead  int
	deltas    int
	afterRead func() // nil: none
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
	if s.afterRead != nil {
		s.afterRead()
	}
	return r, 0, `"next"`, nil
}

// TestDeltaGCUntilThePublish checks that a follower's delta, or chain
// of two, is read, applied and built with no collection by GOGC
// (memory.DeltaGC, set at the first delta's header) until the state it
// replaced is collected after the publish, and that the collector's
// settings are those before once that is done,
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
		v := New(nil, pub, slog.New(slog.DiscardHandler))
		v.memory = func() (int64, int64) { return 1 << 30, 1 << 30 } // no room for a spare: none made beside the test
		gcInKeep := 0
		v.keepRoom = func(int, int64, bool) { // what it keeps: TestFollowerKeepsRoomForTheNextDelta
			gcInKeep = debug.SetGCPercent(-1)
			debug.SetGCPercent(gcInKeep)
		}
		src := &deltaSource{states: c.states}
		v.FollowFrom(src)
		if err := v.follow(context.Background()); err != nil {
			t.Fatal(err)
		}
		if src.deltas != len(c.states)-1 || src.gcInRead != -1 {
			t.Errorf("GOGC %d: %d deltas read with GOGC %d, want %d with it off", percent, src.deltas, src.gcInRead, len(c.states)-1)
		}
		if gcInKeep != -1 {
			t.Errorf("GOGC %d: the collection after the publish ran with GOGC %d, want the delta's setting (off) until it ends", percent, gcInKeep)
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

// TestBuildingUntilThePublish checks that Building says a state is under
// way from a delta's header through its figures' build, and that what it
// gave is closed once the state is published (the answers'
// precompression waits on it), and that it says so of a build alone.
func TestBuildingUntilThePublish(t *testing.T) {
	base := replicatest.Synth(2000, nil)
	next := replicatest.Refreshed(base, 7)
	pub := &views.Published[served.State]{}
	pub.Publish(&served.State{Replica: base, Figures: figures.Build(base, 0)})
	v := New(nil, pub, slog.New(slog.DiscardHandler))
	v.memory = func() (int64, int64) { return 1 << 30, 1 << 30 } // no spare made beside the test
	if v.Building() != nil {
		t.Fatal("building before any state came")
	}
	var inRead, inBuild <-chan struct{}
	src := &deltaSource{states: []*replica.Replica{base, next}, afterRead: func() { inRead = v.Building() }}
	v.FollowFrom(src)
	v.OnPublish(func(*replica.Replica, int64) { inBuild = v.Building() })
	if err := v.follow(context.Background()); err != nil {
		t.Fatal(err)
	}
	if inRead == nil || inBuild != inRead {
		t.Fatalf("Building in the delta's read %v and in its build %v: want one channel through both", inRead, inBuild)
	}
	select {
	case <-inRead:
	default:
		t.Fatal("what Building gave is still open after the publish")
	}
	if v.Building() != nil || pub.Load().Replica.Len() != next.Len() {
		t.Fatal("building after the delta's state was published")
	}
	// A build alone (a refresh's or a full load's publish).
	inBuild = nil
	if err := v.publish(next, nil, 0, "test", nil); err != nil {
		t.Fatal(err)
	}
	if inBuild == nil || v.Building() != nil {
		t.Fatalf("a build: Building %v while it ran, %v after", inBuild, v.Building())
	}
}

// wholeSource gives a follower its first state whole, as fleet/exchange reads
// one (the count of its listings told first).
type wholeSource struct{ r *replica.Replica }

func (s wholeSource) Fetch(_ context.Context, have string, o replica.ReadOptions) (*replica.Replica, int64, string, error) {
	if o.Counted != nil {
		o.Counted(s.r.Len())
	}
	return s.r, 0, `"whole"`, nil
}

// keptRoom records what a Builder asked to keep room for (Builder.keepRoom).
type keptRoom []string

func (k *keptRoom) keep(n int, listingsBytes int64, spareAhead bool) {
	*k = append(*k, fmt.Sprintf("%d listings, %d B of listings, spare ahead %v", n, listingsBytes, spareAhead))
}

// TestFollowerKeepsRoomForTheNextDelta checks that a follower, once it
// published a state (its first, read whole, and each delta after it),
// collects what the state replaced keeping the pages for the next delta
// of as many listings, whose listings array it makes ahead (the spare).
// A first state's collection that returned every free page to the
// system would make the first delta after a start pay a fault a page
// (bench/README.md, The time to a follower's publish).
func TestFollowerKeepsRoomForTheNextDelta(t *testing.T) {
	base := replicatest.Synth(2000, nil)
	next := replicatest.Refreshed(base, 7)
	pub := &views.Published[served.State]{}
	v := New(nil, pub, slog.New(slog.DiscardHandler))
	v.memory = func() (int64, int64) { return 1 << 30, 1 << 30 } // no spare made beside the test
	var kept keptRoom
	v.keepRoom = kept.keep
	v.FollowFrom(wholeSource{base})
	if err := v.follow(context.Background()); err != nil {
		t.Fatal(err)
	}
	array := func(n int) int64 { return int64(spareRoom(n)) * int64(unsafe.Sizeof(views.Listing{})) }
	want := keptRoom{fmt.Sprintf("%d listings, %d B of listings, spare ahead true", base.Len(), array(base.Len()))}
	if pub.Load().Figures == nil || !slices.Equal(kept, want) {
		t.Fatalf("after the first state: kept %q, want %q", kept, want)
	}
	v.FollowFrom(&deltaSource{states: []*replica.Replica{base, next}})
	if err := v.follow(context.Background()); err != nil {
		t.Fatal(err)
	}
	want = append(want, fmt.Sprintf("%d listings, %d B of listings, spare ahead true", next.Len(), array(next.Len())))
	if pub.Load().Replica.Len() != next.Len() || !slices.Equal(kept, want) {
		t.Fatalf("after a delta: kept %q, want %q", kept, want)
	}
}
