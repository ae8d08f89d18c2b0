package limits

import (
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// testLimiter returns a limiter at a fixed clock whose fleet totals were
// just read (empty), so the day's limit can be checked without ClickHouse.
func testLimiter(t *testing.T, perMinute int, perDay uint64, now *time.Time) *Limiter {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Anonymous = Policy{PerMinute: perMinute, PerDay: perDay}
	cfg.Keyed = Policy{PerMinute: perMinute * 2, PerDay: perDay * 2}
	cfg.StaleAfter = time.Hour
	cfg.Now = func() time.Time { return *now }
	l := New(cfg, usagelog.Memory())
	publishTotals(l.Usage, dayOf(*now), nil, *now)
	return l
}

func entries(u *Usage) int {
	n := 0
	u.each(func(Subject, *entry) { n++ })
	return n
}

func TestLimiterAdmitsExactlyTheMinuteConcurrently(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l := testLimiter(t, 30, 1000, &now)
	for _, s := range []Subject{{Addr: netip.MustParseAddr("192.0.2.1")}, {Key: "edge_abcdefgh"}} {
		var mu sync.Mutex
		outcomes := map[ratelimit.Outcome]int{}
		var wg sync.WaitGroup
		for range 200 {
			wg.Go(func() {
				d := l.Admit(s, 0, time.Time{})
				mu.Lock()
				outcomes[d.Outcome]++
				mu.Unlock()
			})
		}
		wg.Wait()
		want := 30
		if s.Key != "" {
			want = 60
		}
		if outcomes[ratelimit.Admitted] != want || outcomes[ratelimit.MinuteFull] != 200-want {
			t.Fatalf("%v: outcomes %v, want exactly %d admitted and the rest refused for the minute", s, outcomes, want)
		}
		// Refused calls are not counted against the day.
		if d := l.AdmitMinute(s, 0, time.Time{}); d.Remaining != 1000*uint64(want/30)-uint64(want) {
			t.Fatalf("%v: %d left of the day after %d admitted calls", s, d.Remaining, want)
		}
	}
}

func TestLimiterMinuteSlidesAndDayHolds(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 900_000_000, time.UTC)
	l := testLimiter(t, 3, 5, &now)
	s := Subject{Addr: netip.MustParseAddr("2001:db8::1")}
	for i := range 3 {
		if d := l.Admit(s, 0, time.Time{}); d.Outcome != ratelimit.Admitted || d.Remaining != uint64(4-i) {
			t.Fatalf("call %d: %+v", i, d)
		}
	}
	now = now.Add(time.Second)
	d := l.Admit(s, 0, time.Time{})
	if d.Outcome != ratelimit.MinuteFull || d.RetryAfter <= 58*time.Second || d.RetryAfter > 61*time.Second || d.Remaining != 2 {
		t.Fatalf("4th call: %+v, want a refusal for about a minute with 2 calls left today", d)
	}
	now = now.Add(time.Minute + 100*time.Millisecond)
	for i := range 2 {
		if d := l.Admit(s, 0, time.Time{}); d.Outcome != ratelimit.Admitted {
			t.Fatalf("call %d of the next minute: %+v", i, d)
		}
	}
	d = l.Admit(s, 0, time.Time{})
	if d.Outcome != ratelimit.DayFull || d.Remaining != 0 || d.RetryAfter != UntilMidnight(now) {
		t.Fatalf("6th call of a day of 5: %+v", d)
	}
	// A key's own daily limit replaces the policy's.
	k := Subject{Key: "edge_raised00"}
	for range 6 {
		if d := l.Admit(k, 7, time.Time{}); d.Outcome != ratelimit.Admitted || d.Limit != 7 {
			t.Fatalf("raised key: %+v", d)
		}
	}
	if d := l.Admit(k, 7, time.Time{}); d.Outcome != ratelimit.MinuteFull || d.Remaining != 1 {
		t.Fatalf("raised key past its minute: %+v", d)
	}
}

func TestLimiterMinuteOnlyThenDay(t *testing.T) {
	now := time.Date(2026, 11, 22, 23, 59, 0, 0, time.UTC)
	l := testLimiter(t, 10, 2, &now)
	s := Subject{Addr: netip.MustParseAddr("192.0.2.9")}
	for range 5 {
		if d := l.AdmitMinute(s, 0, time.Time{}); d.Outcome != ratelimit.Admitted || d.Remaining != 2 {
			t.Fatalf("AdmitMinute counted the day: %+v", d)
		}
	}
	for i, want := range []ratelimit.Outcome{ratelimit.Admitted, ratelimit.Admitted, ratelimit.DayFull} {
		if d := l.CountDay(s, 0, time.Time{}); d.Outcome != want {
			t.Fatalf("CountDay %d: %+v, want %v", i, d, want)
		}
	}
	// The day restarts at midnight; the minute does not.
	now = now.Add(61 * time.Second)
	publishTotals(l.Usage, dayOf(now), nil, now)
	if d := l.Admit(s, 0, time.Time{}); d.Outcome != ratelimit.Admitted || d.Remaining != 1 {
		t.Fatalf("first call of a new day: %+v", d)
	}
}

func TestLimiterReadsTheFleetsTotals(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l := testLimiter(t, 100, 10, &now)
	s := Subject{Key: "edge_fleet000"}
	if d := l.Admit(s, 0, time.Time{}); d.Remaining != 19 {
		t.Fatalf("before the fleet's totals: %+v", d)
	}
	// Another edge counted 15 calls: the next read of the totals holds
	// them, and the calls this edge reserved for the key (reserve.go),
	// of which it used one.
	publishTotals(l.Usage, dayOf(now), map[Subject]uint64{s: 15 + 20/10}, now) // a tenth of the day reserved
	if d := l.Admit(s, 0, time.Time{}); d.Remaining != 20-15-2 {
		t.Fatalf("after the fleet's totals: %+v", d)
	}
	// Stale totals, this edge alone in the fleet: it goes on to the
	// day's limit from the last totals and its own counts.
	now = now.Add(2 * time.Hour)
	if d := l.Admit(s, 0, time.Time{}); d.Outcome != ratelimit.Admitted || d.Remaining != 20-15-3 {
		t.Fatalf("stale totals: %+v", d)
	}
	// An edge that never read the day's totals cannot tell a caller's day.
	fresh := New(l.cfg, usagelog.Memory())
	if d := fresh.Admit(s, 0, time.Time{}); d.Outcome != ratelimit.UsageUnknown || d.RetryAfter != 5*time.Second {
		t.Fatalf("never read: %+v", d)
	}
	if d := fresh.CountDay(s, 0, time.Time{}); d.Outcome != ratelimit.UsageUnknown {
		t.Fatalf("never read, CountDay: %+v", d)
	}
}

// TestStaleTotalsShareTheRemainder: while the fleet's totals cannot be
// read, each edge admits a caller at most its share of what was left of
// the day: with N edges cut off alike, the fleet admits no
// more than the limit. Fresh totals bring the whole day back.
func TestStaleTotalsShareTheRemainder(t *testing.T) {
	for _, tc := range []struct {
		fleet    int64
		used     uint64 // the caller's calls in the last totals
		admitted int    // calls admitted while the totals are stale
	}{
		{fleet: 1, used: 8, admitted: 12},
		{fleet: 2, used: 8, admitted: 6},
		{fleet: 3, used: 8, admitted: 4},
		{fleet: 5, used: 8, admitted: 2},
		{fleet: 13, used: 8, admitted: 0}, // a share under one call admits none
		{fleet: 2, used: 20, admitted: 0},
		{fleet: 2, used: 25, admitted: 0}, // over the limit (a raised limit lowered)
	} {
		now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
		l := testLimiter(t, 1000, 20, &now)
		s := Subject{Addr: netip.MustParseAddr("192.0.2.44")}
		publishTotals(l.Usage, dayOf(now), map[Subject]uint64{s: tc.used}, now)
		l.Usage.fleet.Store(tc.fleet)
		now = now.Add(l.cfg.StaleAfter + time.Second)
		if !l.Usage.Stale(now) {
			t.Fatal("the totals should be stale")
		}
		admitted := 0
		for i := range 30 {
			d := l.Admit(s, 0, time.Time{})
			if d.Outcome == ratelimit.Admitted {
				admitted++
				if want := uint64(tc.admitted - admitted); d.Remaining != want {
					t.Errorf("fleet %d, call %d: remaining %d, want %d", tc.fleet, i, d.Remaining, want)
				}
				continue
			}
			if d.Outcome != ratelimit.DayFull || d.Remaining != 0 {
				t.Errorf("fleet %d, call %d: %+v, want DayFull", tc.fleet, i, d)
			}
		}
		if admitted != tc.admitted {
			t.Errorf("fleet %d, %d used: %d calls admitted while stale, want %d", tc.fleet, tc.used, admitted, tc.admitted)
		}
		// The store is back: the next read holds what the fleet counted.
		publishTotals(l.Usage, dayOf(now), map[Subject]uint64{s: tc.used}, now)
		own := uint64(admitted)
		if d := l.Admit(s, 0, time.Time{}); tc.used+own < 20 && (d.Outcome != ratelimit.Admitted || d.Remaining != 20-tc.used-own-1) {
			t.Errorf("fleet %d: after recovery %+v, want admitted with %d left", tc.fleet, d, 20-tc.used-own-1)
		}
	}
}

func TestUsageForgetsIdleSubjects(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l := testLimiter(t, 5, 100, &now)
	for i := range 1000 {
		l.AdmitMinute(Subject{Addr: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})}, 0, time.Time{})
	}
	counted := Subject{Key: "edge_counted0"}
	l.Admit(counted, 0, time.Time{})
	l.Usage.forget(now.Add(30 * time.Second))
	if n := entries(l.Usage); n != 1001 {
		t.Fatalf("%d subjects kept within the minute, want 1001", n)
	}
	l.Usage.forget(now.Add(2 * time.Minute))
	if n := entries(l.Usage); n != 1 {
		t.Fatalf("%d subjects kept, want only the one with a day's call not yet written", n)
	}
	// A forgotten subject starts again with an empty minute.
	now = now.Add(2 * time.Minute)
	if d := l.AdmitMinute(Subject{Addr: netip.AddrFrom4([4]byte{10, 0, 0, 0})}, 0, time.Time{}); d.Outcome != ratelimit.Admitted {
		t.Fatalf("a forgotten subject: %+v", d)
	}
}

// TestLimiterLimitAboveWhatARingCounts: a minute's limit above 2³² calls
// is as many as a ring counts, not its low 32 bits (1<<32 would be 0, and
// refuse every call).
func TestLimiterLimitAboveWhatARingCounts(t *testing.T) {
	const above = 1 << (strconv.IntSize - 32) // 2³² where int has 64 bits
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	l := testLimiter(t, above, 1000, &now)
	if d := l.Admit(Subject{Addr: netip.MustParseAddr("192.0.2.9")}, 0, time.Time{}); d.Outcome != ratelimit.Admitted {
		t.Fatalf("outcome %v with a minute's limit of 2^32; want admitted", d.Outcome)
	}
	w := NewWindows(above, time.Minute, HashAddr)
	if ok, _ := w.Allow(netip.MustParseAddr("192.0.2.9"), now); !ok {
		t.Fatal("Windows with a limit of 2^32 refused the first event")
	}
}

// publishTotals publishes the fleet's totals of day m, read at read, as a
// Sync would.
func publishTotals(u *Usage, day int64, m map[Subject]uint64, read time.Time) {
	raw := make(map[string]uint64, len(m))
	for s, n := range m {
		raw[s.String()] = n
	}
	t := newDayTotals(day, raw)
	t.read.Store(read.UnixNano())
	u.totals.Store(t)
}

// TestTryAdmit checks the replay path's admission: a call with room in
// both windows is admitted and counted as Admit counts it; one without is
// refused with nothing counted, the minute's refusal included, so that
// Admit decides it next as if TryAdmit had not been called.
func TestTryAdmit(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	s := Subject{Addr: netip.MustParseAddr("192.0.2.7")}

	l := testLimiter(t, 3, 1000, &now)
	for i := range 3 {
		d, ok := l.TryAdmit(s, 0, time.Time{})
		if !ok || d.Remaining != uint64(1000-i-1) || d.Outcome != ratelimit.Admitted {
			t.Fatalf("call %d: %v, %+v", i+1, ok, d)
		}
	}
	if _, ok := l.TryAdmit(s, 0, time.Time{}); ok {
		t.Fatal("admitted past the minute")
	}
	// Nothing counted: Admit refuses for the minute and the day has 997.
	if d := l.Admit(s, 0, time.Time{}); d.Outcome != ratelimit.MinuteFull || d.Remaining != 997 {
		t.Fatalf("after a refused TryAdmit: %+v", d)
	}

	l = testLimiter(t, 100, 2, &now)
	l.TryAdmit(s, 0, time.Time{})
	l.TryAdmit(s, 0, time.Time{})
	if _, ok := l.TryAdmit(s, 0, time.Time{}); ok {
		t.Fatal("admitted past the day")
	}
	// The day's refusal did not count against the minute: Admit counts it
	// once (the minute's third call) and refuses it for the day.
	if d := l.Admit(s, 0, time.Time{}); d.Outcome != ratelimit.DayFull {
		t.Fatalf("past the day: %+v", d)
	}
	if d := l.AdmitMinute(s, 0, time.Time{}); d.Outcome != ratelimit.Admitted {
		t.Fatalf("the minute counted the refused TryAdmit: %+v", d)
	}
}
