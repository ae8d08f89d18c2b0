package missgate

import (
	"context"
	"errors"
	"math"
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
		{0.6 / float64(procs), 1},
		{1.5, (3*procs + 1) / 2},
		{0, max(1, int(math.Ceil(float64(procs)*DefaultConfig().Share-1e-9)))}, // the default
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

// TestShareOfTheCPU: misses spend their computing time from a budget
// that grows at the share's rate up to the burst: once a miss has spent
// more than the budget holds, the next waits for the budget (refused when
// that is longer than the gate's Wait), and the budget grows back.
func TestShareOfTheCPU(t *testing.T) {
	g := New(Config{Share: 0.01 / float64(runtime.GOMAXPROCS(0)), Burst: 10 * time.Millisecond, Wait: 5 * time.Millisecond, Queue: 1})
	leave, err := g.Enter()
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(30 * time.Millisecond) // a miss of 30 ms: 20 ms past the burst
	leave()
	// At 1% of a core, 20 ms of computing takes 2 s to earn back.
	_, err = g.Enter()
	refusal(t, err)
	// Time passes (as the budget sees it): the credit is back.
	g.mu.Lock()
	g.at = g.at.Add(-3 * time.Second)
	g.mu.Unlock()
	if l, err := g.Enter(); err != nil {
		t.Fatalf("after the budget grew back: %v", err)
	} else {
		l()
	}
	// A wide share never waits: a burst of misses runs at once.
	wide := New(Config{Share: 1, Burst: time.Second, Wait: time.Millisecond})
	for range 100 {
		l, err := wide.Enter()
		if err != nil {
			t.Fatal(err)
		}
		l()
	}
}

// TestIdleCPUIsTaken: while no goroutine waits for a core, misses run
// at once, as many as GOMAXPROCS, whatever their budget (the CPU is
// idle); once the scheduler shows work waiting, the share applies again.
func TestIdleCPUIsTaken(t *testing.T) {
	g := New(Config{Share: 0.0001, Burst: time.Millisecond, Wait: time.Millisecond, Queue: 1})
	if !g.Contended(time.Now()) {
		t.Fatal("a gate nobody watches is not contended: the share must apply")
	}
	g.contended.Store(0) // what Watch keeps while no work waits for a core
	var leaves []func()
	for range runtime.GOMAXPROCS(0) {
		l, err := g.Enter()
		if err != nil {
			t.Fatalf("idle CPU: %v", err)
		}
		leaves = append(leaves, l)
	}
	time.Sleep(5 * time.Millisecond) // far past the budget of 1 ms
	for _, l := range leaves {
		l()
	}
	if l, err := g.Enter(); err != nil {
		t.Fatalf("idle CPU, the budget spent: %v", err)
	} else {
		l()
	}
	// Work waiting for a core, as Watch sees it: every core busy four
	// times over.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go g.Watch(ctx)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 * runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				for i := 0; i < 1e5; i++ {
					_ = i * i
				}
			}
		})
	}
	deadline := time.Now().Add(10 * time.Second)
	for !g.Contended(time.Now()) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(stop)
	wg.Wait()
	if !g.Contended(time.Now()) {
		t.Fatal("busy cores never seen as contended")
	}
}
