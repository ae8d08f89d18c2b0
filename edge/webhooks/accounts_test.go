package webhooks

import (
	"testing"
	"time"
)

// TestBusyTestDeliverySaysHowLongItMayRun: while an account's test
// delivery runs, the next is refused with the wait until the running one
// must have ended (its timeout), not a second; once it ends, the next is
// taken.
func TestBusyTestDeliverySaysHowLongItMayRun(t *testing.T) {
	b := testBudget{runs: 10 * time.Second}
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	release, _, ok := b.take("a@example.com", now)
	if !ok {
		t.Fatal("the first test delivery was refused")
	}
	for _, tc := range []struct {
		after, want time.Duration
	}{{0, 10 * time.Second}, {3 * time.Second, 7 * time.Second}, {9800 * time.Millisecond, time.Second}, {15 * time.Second, time.Second}} {
		if _, wait, ok := b.take("a@example.com", now.Add(tc.after)); ok || wait != tc.want {
			t.Errorf("%v into a running test delivery: ok %v, wait %v; want refused, %v", tc.after, ok, wait, tc.want)
		}
	}
	if _, _, ok := b.take("b@example.com", now); !ok {
		t.Error("another account's test delivery waited for this one's")
	}
	release()
	if _, _, ok := b.take("a@example.com", now.Add(11*time.Second)); !ok {
		t.Error("the next test delivery after the first ended was refused")
	}
}
