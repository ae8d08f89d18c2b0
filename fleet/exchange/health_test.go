package exchange

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/chtest/faultproxy"
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

// eventuallyWithin waits up to 30 s for cond.
func eventuallyWithin(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within 30 s: %s", what)
		}
	}
}

// TestLeaderWorkingOnlyWhileItAnswers cuts a follower off from its
// leader without a word (a proxy that forwards nothing), while the
// follower's long poll is held and its asks wait for an hour before they
// give up (the leader holds a long poll as long): the follower says the
// leader does not work once it stops answering, not when an ask gives
// up, and says it works again once the link is back, before any ask held
// through the cut ends.
func TestLeaderWorkingOnlyWhileItAnswers(t *testing.T) {
	l := startLeader(t, Config{Idle: time.Hour}) // a long poll held for as long
	l.offer(t, synth(50, 1), 7)
	cut, err := faultproxy.Start(strings.TrimPrefix(l.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	f := follower(t, Config{Idle: time.Hour}, "http://"+cut.Addr(), false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, _, tag, err := f.fetch(ctx, "", replica.ReadOptions{Generation: 1})
	if err != nil || r == nil || tag == "" {
		t.Fatalf("the leader's state: %v, %v %q", r, err, tag)
	}
	watched := make(chan struct{})
	go func() { defer close(watched); f.Watch(ctx, func() string { return tag }, func() {}) }()
	defer func() { cancel(); <-watched }()
	if s := f.Status(); !s.LeaderWorking {
		t.Fatalf("before the cut: %+v", s)
	}
	time.Sleep(300 * time.Millisecond) // the long poll held
	cut.Set(faultproxy.Blackhole, 0, 0)
	eventuallyWithin(t, "the follower says its leader does not work", func() bool { return !f.Status().LeaderWorking })
	if s := f.Status(); s.NoWorkingLeaderSince == nil || s.Leading {
		t.Fatalf("cut off: %+v", s)
	}
	cut.Set(faultproxy.None, 0, 0)
	eventuallyWithin(t, "the follower says its leader works again", func() bool { return f.Status().LeaderWorking })
}

// TestAFailureFromBeforeTheLastAnswerDoesNotCount: a follower's long
// poll, held at its leader, fails after the leader answered another ask
// (as one held through a cut fails after the heal): the follower still
// says its leader works.
func TestAFailureFromBeforeTheLastAnswerDoesNotCount(t *testing.T) {
	held := make(chan struct{}, 8)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodHead && r.Header.Get("Prefer") != "":
			held <- struct{}{}
			select {
			case <-release:
				panic(http.ErrAbortHandler) // the connection dies under the ask
			case <-r.Context().Done():
			}
		case r.URL.Path == StatePath:
			w.Header().Set("ETag", r.Header.Get("If-None-Match"))
			w.WriteHeader(http.StatusNotModified)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	defer close(release)
	f := follower(t, Config{Idle: time.Hour}, srv.URL, false)
	ctx, cancel := context.WithCancel(context.Background())
	watched := make(chan struct{})
	go func() { defer close(watched); f.Watch(ctx, func() string { return `"state-x"` }, func() {}) }()
	defer func() { cancel(); <-watched }()
	select {
	case <-held:
	case <-time.After(30 * time.Second):
		t.Fatal("no long poll")
	}
	// The leader answers another ask meanwhile.
	if r, _, _, err := f.fetch(ctx, `"state-x"`, replica.ReadOptions{}); err != nil || r != nil {
		t.Fatalf("a 304: %v, %v", r, err)
	}
	if s := f.Status(); !s.LeaderWorking {
		t.Fatalf("after the leader answered: %+v", s)
	}
	release <- struct{}{}
	select {
	case <-held: // the failed poll was seen, and the next one asked
	case <-time.After(30 * time.Second):
		t.Fatal("no long poll after the first failed")
	}
	if s := f.Status(); !s.LeaderWorking {
		t.Fatalf("after a long poll from before the leader's answer failed: %+v", s)
	}
}

// TestWatchMovesToTheNewLeader: a follower's long poll is held at a
// leader cut off without a word when the election names another: the
// follower asks the new leader at once, and is told of its new state,
// not after the held ask gives up.
func TestWatchMovesToTheNewLeader(t *testing.T) {
	cfg := Config{Idle: time.Hour}
	old, next := startLeader(t, cfg), startLeader(t, cfg)
	s := synth(50, 1)
	old.offer(t, s, 1)
	next.offer(t, s, 1)
	cut, err := faultproxy.Start(strings.TrimPrefix(old.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	var named atomic.Pointer[string]
	oldAddr := "http://" + cut.Addr()
	named.Store(&oldAddr)
	fcfg := cfg
	fcfg.Dir = t.TempDir()
	f := NewFollower(fcfg, func() string { return *named.Load() }, func() bool { return false })
	ctx, cancel := context.WithCancel(context.Background())
	_, _, tag, err := f.fetch(ctx, "", replica.ReadOptions{Generation: 1})
	if err != nil || tag == "" {
		t.Fatalf("the state: %v, tag %q", err, tag)
	}
	told := make(chan struct{}, 16)
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		f.Watch(ctx, func() string { return tag }, func() { told <- struct{}{} })
	}()
	defer func() { cancel(); <-watched }()
	time.Sleep(300 * time.Millisecond) // the long poll held at the first
	cut.Set(faultproxy.Blackhole, 0, 0)
	named.Store(&next.url)
	next.offer(t, changed(s, 5, 2), 1)
	select {
	case <-told:
	case <-time.After(30 * time.Second):
		t.Fatal("the follower was not told of the new leader's state within 30 s")
	}
}
