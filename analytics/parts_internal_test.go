package analytics

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// TestInOrder checks the part pipeline: results are used in part order
// whatever order they finish in, no more than workers parts are fetched
// and unused at once, no worker runs two fetches at once, and the first
// error stops it.
func TestInOrder(t *testing.T) {
	const n, workers = 40, 3
	var inFlight, most atomic.Int32
	busy := make([]atomic.Bool, workers)
	var next int
	err := inOrder(context.Background(), n, workers, func(_ context.Context, i, w int) (int, error) {
		if !busy[w].CompareAndSwap(false, true) {
			t.Errorf("worker %d runs two fetches at once", w)
		}
		if c := inFlight.Add(1); c > most.Load() {
			most.Store(c)
		}
		time.Sleep(time.Duration((n-i)%4) * time.Millisecond) // finish out of order
		busy[w].Store(false)
		return i * i, nil
	}, func(i, v int) error {
		inFlight.Add(-1)
		if i != next || v != i*i {
			t.Errorf("used part %d (%d), want part %d", i, v, next)
		}
		next++
		return nil
	})
	if err != nil || next != n {
		t.Fatalf("err %v after %d parts, want all %d", err, next, n)
	}
	if most.Load() > workers {
		t.Errorf("%d parts fetched and unused at once, want at most %d", most.Load(), workers)
	}
	boom := errors.New("boom")
	used := 0
	err = inOrder(context.Background(), n, workers, func(_ context.Context, i, _ int) (int, error) {
		if i == 5 {
			return 0, boom
		}
		return i, nil
	}, func(int, int) error { used++; return nil })
	if !errors.Is(err, boom) || used != 5 {
		t.Fatalf("error at part 5: %v after %d used, want boom after 5", err, used)
	}
}
