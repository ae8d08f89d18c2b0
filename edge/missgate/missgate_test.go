package missgate

import (
	"errors"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/problem"
)

func TestSlotsFollowTheShare(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	for _, tc := range []struct {
		share float64
		want  int
	}{
		{0.0001, 1}, // never none
		{1, procs},
		{2, 2 * procs},
		{0, max(1, int(float64(procs)*DefaultConfig().Share+0.5))}, // the default
	} {
		if got := New(Config{Share: tc.share}).Slots(); got != tc.want {
			t.Errorf("share %v on %d procs: %d slots, want %d", tc.share, procs, got, tc.want)
		}
	}
}

func refusal(t *testing.T, err error) {
	t.Helper()
	var p *problem.Problem
	if !errors.As(err, &p) || p.Status != http.StatusServiceUnavailable {
		t.Fatalf("refusal: %v, want a 503 problem", err)
	}
}

// TestWaitAndQueue: a miss waits for a turn at most the gate's Wait, at
// most Queue of them a slot wait at once, and a turn freed goes to one
// waiting.
func TestWaitAndQueue(t *testing.T) {
	g := New(Config{Share: 0.0001, Wait: 20 * time.Millisecond, Queue: 1})
	leave, err := g.Enter()
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Enter() // waits 20 ms, then refused
	refusal(t, err)

	long := New(Config{Share: 0.0001, Wait: time.Minute, Queue: 1})
	hold, err := long.Enter()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var waited error
	wg.Go(func() {
		var l func()
		l, waited = long.Enter()
		if l != nil {
			l()
		}
	})
	for long.waiting.Load() != 1 {
		runtime.Gosched()
	}
	_, err = long.Enter() // the queue is full: refused at once, not after a minute
	refusal(t, err)
	hold() // the waiting one gets the turn
	wg.Wait()
	if waited != nil {
		t.Fatalf("the waiting miss: %v", waited)
	}
	leave()
	if l, err := g.Enter(); err != nil {
		t.Fatalf("a turn freed: %v", err)
	} else {
		l()
	}
}
