package limits

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// reserveFleet returns n limiters over one store, each of which has
// read the day (no Run: a call waiting for a reservation syncs itself).
func reserveFleet(t *testing.T, n int, store usagelog.Store, now *time.Time) []*Limiter {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Keyed = Policy{PerMinute: 100000, PerDay: 20_000}
	cfg.Now = func() time.Time { return *now }
	var ls []*Limiter
	for range n {
		l := New(cfg, store)
		if err := l.Usage.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
	}
	return ls
}

// stored returns the calls of s the store holds for the day of now.
func stored(t *testing.T, store usagelog.Store, s Subject, now time.Time) uint64 {
	t.Helper()
	read, err := store.Day(context.Background(), now)
	if err != nil {
		t.Fatal(err)
	}
	return read.Totals[s.String()]
}

// TestKeyedFleetAdmitsAtMostTheDay: three edges take 300 calls of a key
// of 50 a day at once, none of them syncing but when a call waits for a
// reservation: the fleet admits at most 50, each admitted call is in the
// store, and once each edge refuses for the day, at most the reserved
// calls left unused on the others are lost to the caller. (The release
// before admitted 50 on each edge, 150, none of them written.)
func TestKeyedFleetAdmitsAtMostTheDay(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	store := usagelog.Memory()
	ls := reserveFleet(t, 3, store, &now)
	s := Subject{Key: "edge_fleetday"}
	const day = 50
	var (
		mu       sync.Mutex
		outcomes = map[ratelimit.Outcome]int{}
		wg       sync.WaitGroup
	)
	for i := range 300 {
		wg.Go(func() {
			d := ls[i%3].Admit(s, day, time.Time{})
			mu.Lock()
			outcomes[d.Outcome]++
			mu.Unlock()
		})
	}
	wg.Wait()
	for _, l := range ls {
		for range day {
			d := l.Admit(s, day, time.Time{})
			outcomes[d.Outcome]++
			if d.Outcome == ratelimit.DayFull {
				if d.Remaining != 0 || d.RetryAfter != UntilMidnight(now) {
					t.Errorf("refused for the day: %+v, want none left and Retry-After until midnight", d)
				}
				break
			}
		}
	}
	admitted, in := outcomes[ratelimit.Admitted], stored(t, store, s, now)
	t.Logf("outcomes %v, %d in the store", outcomes, in)
	if admitted > day || uint64(admitted) > in || admitted < day/2 {
		t.Fatalf("outcomes %v: %d admitted, %d in the store; want at most the day's %d (and most of it), each in the store", outcomes, admitted, in, day)
	}
}

// TestKilledEdgeForgetsNoAdmission: an edge that admits a key's calls
// and dies without a flush leaves every one of them in the store (the
// release before: none until its next sync).
func TestKilledEdgeForgetsNoAdmission(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	store := usagelog.Memory()
	a := reserveFleet(t, 1, store, &now)[0]
	s := Subject{Key: "edge_killed00"}
	for i := range 9 {
		if d := a.Admit(s, 100, time.Time{}); d.Outcome != ratelimit.Admitted || d.Remaining != uint64(100-i-1) {
			t.Fatalf("call %d: %+v, want admitted with %d left", i+1, d, 100-i-1)
		}
	}
	// a is gone: no flush. What the store holds is what the fleet sees.
	if in := stored(t, store, s, now); in < 9 {
		t.Fatalf("the store holds %d calls of the key after 9 admitted and a kill; want 9 or more", in)
	}
	b := reserveFleet(t, 1, store, &now)[0]
	admitted := 0
	for range 100 {
		if b.Admit(s, 100, time.Time{}).Outcome == ratelimit.Admitted {
			admitted++
		}
	}
	if in := stored(t, store, s, now); admitted+9 > 100 || in != 100 {
		t.Fatalf("after the kill another edge admitted %d (the store holds %d); want at most %d, the store the day", admitted, in, 100-9)
	}
}

// TestReservationOnlyWithinTheDay: a reservation read back with a total
// past the day's limit is usable only as far as the limit: an edge that
// had not read another's 98 calls of a key of 100 reserves 4, reads
// 102, and admits 2, then refuses for the day.
func TestReservationOnlyWithinTheDay(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	store := usagelog.Memory()
	b := reserveFleet(t, 1, store, &now)[0]
	s := Subject{Key: "edge_clipped0"}
	if err := store.Add(context.Background(), analytics.UsageBatch{Edge: "other", Seq: 1},
		[]analytics.UsageDelta{{Day: dayTime(dayOf(now)), Subject: s.String(), Calls: 98}}, false); err != nil {
		t.Fatal(err)
	}
	var got []ratelimit.Outcome
	for range 4 {
		got = append(got, b.Admit(s, 100, time.Time{}).Outcome)
	}
	want := []ratelimit.Outcome{ratelimit.Admitted, ratelimit.Admitted, ratelimit.DayFull, ratelimit.DayFull}
	if !equal(got, want) {
		t.Fatalf("outcomes %v, want %v", got, want)
	}
	if in := stored(t, store, s, now); in != 98+minReservation {
		t.Fatalf("the store holds %d calls, want the other edge's 98 and the %d reserved", in, minReservation)
	}
}

func equal[T comparable](a, b []T) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// failingStore fails its writes or its reads of the log while told to.
type failingStore struct {
	usagelog.Store
	mu                    sync.Mutex
	failWrites, failReads bool
}

var errOut = errors.New("the usage log is out of reach")

func (f *failingStore) Add(ctx context.Context, b analytics.UsageBatch, d []analytics.UsageDelta, again bool) error {
	f.mu.Lock()
	fail := f.failWrites
	f.mu.Unlock()
	if fail {
		return errOut
	}
	return f.Store.Add(ctx, b, d, again)
}

func (f *failingStore) Since(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, usagelog.Pos, error) {
	f.mu.Lock()
	fail := f.failReads
	f.mu.Unlock()
	if fail {
		return nil, pos, errOut
	}
	return f.Store.Since(ctx, day, pos)
}

func (f *failingStore) set(writes, reads bool) {
	f.mu.Lock()
	f.failWrites, f.failReads = writes, reads
	f.mu.Unlock()
}

// TestKeyedCallsRefusedForAMomentWhenTheLogIsOut: with nothing reserved
// and the log out of reach, a keyed call is refused for a moment
// (Unsettled, Retry-After 5 s), not admitted past what was written;
// what was reserved before goes on being admitted; a reservation written
// whose read failed is usable once a read brings it back.
func TestKeyedCallsRefusedForAMomentWhenTheLogIsOut(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	store := &failingStore{Store: usagelog.Memory()}
	a := reserveFleet(t, 1, store, &now)[0]
	s := Subject{Key: "edge_logout00"}
	if d := a.Admit(s, 100, time.Time{}); d.Outcome != ratelimit.Admitted {
		t.Fatalf("first call: %+v", d)
	}
	store.set(true, false)
	for i := range minReservation - 1 { // the rest of the first reservation
		if d := a.Admit(s, 100, time.Time{}); d.Outcome != ratelimit.Admitted {
			t.Fatalf("call %d, reserved before the log went out: %+v", i+2, d)
		}
	}
	for _, fail := range []struct{ writes, reads bool }{{true, false}, {false, true}} {
		store.set(fail.writes, fail.reads)
		if d := a.Admit(s, 100, time.Time{}); d.Outcome != ratelimit.Unsettled || d.RetryAfter != 5*time.Second {
			t.Fatalf("nothing reserved, writes failing %v, reads failing %v: %+v, want Unsettled, Retry-After 5 s", fail.writes, fail.reads, d)
		}
	}
	store.set(false, false)
	if d := a.Admit(s, 100, time.Time{}); d.Outcome != ratelimit.Admitted {
		t.Fatalf("the log back: %+v", d)
	}
	if in, admitted := stored(t, store, s, now), uint64(minReservation+1); in < admitted {
		t.Fatalf("the store holds %d calls after %d admitted", in, admitted)
	}
}

// TestReservationSize: a reservation is the key's rate over the last
// interval for the next ahead intervals, at least minReservation or the
// calls waiting, at most the key's per-minute limit and this edge's
// share of what is left; ahead of need (nobody
// waiting) only when the rate would use what is left within an
// interval.
func TestReservationSize(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	every := 2 * time.Second
	for _, tc := range []struct {
		name                     string
		limit, used, avail, prev uint64
		minute                   uint64 // 0: none
		waiting                  int
		fleet                    uint64
		want                     uint64
	}{
		{name: "first call", limit: 1000, waiting: 1, fleet: 1, want: minReservation},
		{name: "a burst waiting", limit: 1000, waiting: 40, fleet: 1, want: 40},
		{name: "a steady rate", limit: 1000, prev: 10, waiting: 1, fleet: 1, want: ahead * 10},
		{name: "a steady rate past the minute's limit", limit: 10000, prev: 30, waiting: 1, fleet: 1, minute: 120, want: 120},
		{name: "a small key's tenth", limit: 30, prev: 3, waiting: 1, fleet: 1, want: 3},
		{name: "the share of three edges", limit: 1000, used: 880, waiting: 100, fleet: 3, want: 40},
		{name: "the last call", limit: 1000, used: 999, waiting: 5, fleet: 3, want: 1},
		{name: "the day used", limit: 1000, used: 1000, waiting: 5, fleet: 1, want: 0},
		{name: "ahead of need", limit: 10000, used: 100, avail: 10, prev: 30, fleet: 1, want: ahead*30 - 10},
		{name: "enough left", limit: 1000, used: 100, avail: 40, prev: 30, fleet: 1, want: 0},
		{name: "idle", limit: 1000, used: 100, avail: 2, fleet: 1, want: 0},
	} {
		e := &entry{base: tc.used}
		e.rsv = reservations{keyed: true, limit: tc.limit, minute: tc.minute, avail: tc.avail, waiting: tc.waiting,
			win: now.UnixNano() - int64(every) - 1, cur: tc.prev} // rolled to prev by the look
		if got := e.reservation(now, tc.fleet, every); got != tc.want {
			t.Errorf("%s: reserves %d, want %d", tc.name, got, tc.want)
		}
	}
	e := &entry{}
	e.rsv = reservations{keyed: true, limit: 1000, held: 4, waiting: 9}
	if got := e.reservation(now, 1, every); got != 0 {
		t.Errorf("one reservation on its way: reserves %d more, want 0", got)
	}
}

// TestBackToBackSyncsReserveNoMoreThanTheDay: a Sync that follows the one that confirmed a key's
// reservation, while its calls still wait (they wake at the end of a
// Sync, and the next one starts at once), reserves only what is left of
// the day: the key's fleet total is read afresh, not taken from its last
// call's read, which misses the reservation just confirmed. Before, a
// burst of 200 calls at a key of 50 a day on one edge wrote 54 calls.
func TestBackToBackSyncsReserveNoMoreThanTheDay(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	store := usagelog.Memory()
	l := reserveFleet(t, 1, store, &now)[0]
	s := Subject{Key: "edge_backtoback"}
	const day = 10
	if d := l.Admit(s, day, time.Time{}); d.Outcome != ratelimit.Admitted {
		t.Fatalf("first call: %+v", d)
	}
	// Calls waiting (as a burst leaves them between two Syncs): two
	// Syncs in a row, no call looking in between.
	e := l.Usage.lock(s, now, false)
	e.rsv.waiting = 20
	e.mu.Unlock()
	for i := range 2 {
		if err := l.Usage.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		if got := stored(t, store, s, now); got > day {
			t.Fatalf("after Sync %d the log holds %d calls of a key of %d a day", i, got, day)
		}
	}
}

// TestStoppedEdgesLeaveTheShareWithinAMinute: an edge that wrote no
// usage for over a minute (stopped, or restarted under another name)
// no longer divides a key's reservations, though it counts in the
// fleet's hour for the stale share.
func TestStoppedEdgesLeaveTheShareWithinAMinute(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	u := NewUsage(usagelog.Memory(), time.Minute, func() time.Time { return now })
	u.edges["gone"] = now.Add(-2 * time.Minute)
	u.edges["live"] = now.Add(-time.Second)
	u.countFleet(now)
	if fleet, active := u.fleet.Load(), u.activeEdges.Load(); fleet != 3 || active != 2 {
		t.Fatalf("fleet %d, sharing reservations %d; want 3 and 2", fleet, active)
	}
}

// TestLoweredKeyLimitHoldsAgainstReservations: a key whose daily limit is
// lowered (edge key limit) after its edge reserved calls under the old
// one is admitted only up to the new limit, on the full path and on the
// replay path: the calls reserved and not used stay counted, never
// admitted. (The release before admitted every reserved call: over HTTP
// a key lowered to 5 a day made 27 calls, 22 of them with
// RateLimit-Remaining 0.)
func TestLoweredKeyLimitHoldsAgainstReservations(t *testing.T) {
	type try struct {
		replay bool
		want   ratelimit.Outcome // on the replay path: Admitted or not
		left   uint64            // RateLimit-Remaining (the full path)
	}
	cases := []struct {
		name  string
		limit uint64 // lowered to, after one call of 20,000 a day
		tries []try
	}{
		{"one call left", 2, []try{
			{false, ratelimit.Admitted, 0}, {false, ratelimit.DayFull, 0},
			{true, ratelimit.DayFull, 0}, {false, ratelimit.DayFull, 0},
		}},
		{"two calls left", 3, []try{
			{false, ratelimit.Admitted, 1}, {false, ratelimit.Admitted, 0},
			{false, ratelimit.DayFull, 0},
		}},
		{"none left, replay first", 1, []try{
			{true, ratelimit.DayFull, 0}, {false, ratelimit.DayFull, 0},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
			l := reserveFleet(t, 1, usagelog.Memory(), &now)[0]
			s := Subject{Key: "edge_lowered0"}
			if d := l.Admit(s, 20_000, time.Time{}); d.Outcome != ratelimit.Admitted {
				t.Fatalf("first call: %v, want admitted", d.Outcome)
			}
			if r := l.Usage.Reserved(); r == 0 {
				t.Fatal("nothing reserved after the first call: the test needs calls reserved under the old limit")
			}
			for i, tr := range c.tries {
				if tr.replay {
					d, ok := l.TryAdmit(s, c.limit, time.Time{})
					if ok != (tr.want == ratelimit.Admitted) {
						t.Fatalf("call %d, replay path: admitted %v (remaining %d), want %v", i+2, ok, d.Remaining, tr.want == ratelimit.Admitted)
					}
					continue
				}
				d := l.Admit(s, c.limit, time.Time{})
				if d.Outcome != tr.want || d.Remaining != tr.left {
					t.Fatalf("call %d: %v, remaining %d; want %v, remaining %d", i+2, d.Outcome, d.Remaining, tr.want, tr.left)
				}
			}
		})
	}
}
