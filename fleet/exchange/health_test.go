package exchange

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/edge-stats/edge/views/replica"
)

// TestFollowerRechecksANonLeader: the edge the election names answers
// that it does not lead (a stale name): the follower asks for the
// election to be read again and says the fleet has no working leader,
// since when; once the edge it names leads (here with no state yet), the
// leader works again.
func TestFollowerRechecksANonLeader(t *testing.T) {
	l := startLeader(t, Config{})
	l.leading.Store(false)
	var rechecks atomic.Int64
	f := NewFollower(Config{Dir: t.TempDir(), Recheck: func() { rechecks.Add(1) }}, func() string { return l.url }, func() bool { return false })
	ctx := context.Background()
	if _, _, _, err := f.fetch(ctx, "", replica.ReadOptions{}); err == nil {
		t.Fatal("a state from an edge that does not lead")
	}
	s := f.Status()
	if rechecks.Load() != 1 || s.LeaderWorking || s.NoWorkingLeaderSince == nil || s.Leader != l.url || s.Leading {
		t.Fatalf("after a non-leader's answer: %d rechecks, status %+v", rechecks.Load(), s)
	}
	since := *s.NoWorkingLeaderSince
	f.fetch(ctx, "", replica.ReadOptions{})
	if s := f.Status(); rechecks.Load() != 2 || s.NoWorkingLeaderSince == nil || !s.NoWorkingLeaderSince.Equal(since) {
		t.Fatalf("after a second answer: %d rechecks, status %+v (since %v)", rechecks.Load(), s, since)
	}
	l.leading.Store(true)
	f.fetch(ctx, "", replica.ReadOptions{})
	if s := f.Status(); !s.LeaderWorking || s.NoWorkingLeaderSince != nil || rechecks.Load() != 2 {
		t.Fatalf("once the edge named leads: %d rechecks, status %+v", rechecks.Load(), s)
	}
}
