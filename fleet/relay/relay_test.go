package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
)

var day = time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)

// add writes one batch of an edge to store.
func add(t *testing.T, store usagelog.Store, edge string, seq uint64, subject string, calls uint64) {
	t.Helper()
	if err := store.Add(context.Background(), analytics.UsageBatch{Edge: edge, Seq: seq},
		[]analytics.UsageDelta{{Day: day, Subject: subject, Calls: calls}}, false); err != nil {
		t.Fatal(err)
	}
}

// batches returns the batches of changes, each once, sorted.
func batches(changes []analytics.UsageChange) []string {
	var out []string
	for _, c := range changes {
		b := fmt.Sprintf("%s/%d", c.Batch.Edge, c.Batch.Seq)
		if !slices.Contains(out, b) {
			out = append(out, b)
		}
	}
	slices.Sort(out)
	return out
}

// TestFollowerReadsWhatTheStoreHas has a leader read the log as its
// usage sync does, and a follower read it through the leader from
// several positions: it gets every batch a read of the store itself
// would get, and reads the store only when the leader's record does not
// reach back to its position.
func TestFollowerReadsWhatTheStoreHas(t *testing.T) {
	ctx := context.Background()
	base := usagelog.Memory()
	rec := NewRecorder(base)
	srv := httptest.NewServer(rec)
	defer srv.Close()
	var leader atomic.Value
	leader.Store(srv.URL)
	follower := NewStore(base, &Client{Leader: func() string { return leader.Load().(string) }})

	read, err := rec.Day(ctx, day)
	if err != nil {
		t.Fatal(err)
	}
	lpos := read.Pos
	fpos := read.Pos
	for round := range 6 {
		add(t, base, "a", uint64(round), "key:1", 1)
		add(t, base, "b", uint64(round), "addr:10.0.0.1", 2)
		if _, lpos, err = rec.Since(ctx, day, lpos); err != nil {
			t.Fatal(err)
		}
		want, _, _ := base.Since(ctx, day, fpos)
		got, next, err := follower.Since(ctx, day, fpos)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := batches(got), batches(want); !slices.Equal(g, w) {
			t.Fatalf("round %d: the follower read %v, the store holds %v", round, g, w)
		}
		if round%2 == 0 { // every other round the follower keeps its position: reads overlap
			fpos = next
		}
	}
	if relayed, directly := follower.Reads(); relayed != 6 || directly != 0 {
		t.Errorf("%d reads answered by the leader, %d by the store; want 6 and 0", relayed, directly)
	}

	// A position before the leader's record, another day, a leader that
	// is gone, or none: the store answers.
	for name, c := range map[string]struct {
		day    time.Time
		pos    usagelog.Pos
		leader string
	}{
		"another day":   {day.AddDate(0, 0, 1), fpos, srv.URL},
		"no leader":     {day, fpos, ""},
		"a leader gone": {day, fpos, "http://127.0.0.1:1"},
	} {
		leader.Store(c.leader)
		_, before := follower.Reads()
		want, _, _ := base.Since(ctx, c.day, c.pos)
		got, _, err := follower.Since(ctx, c.day, c.pos)
		if _, after := follower.Reads(); err != nil || after != before+1 || !slices.Equal(batches(got), batches(want)) {
			t.Errorf("%s: %v %v, read by the store %d times", name, batches(got), err, after-before)
		}
	}

	// A day read starts the record again.
	leader.Store(srv.URL)
	if _, err := rec.Day(ctx, day); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := rec.answer(day, lpos); ok {
		t.Error("the record reaches back across a day read")
	}
	// A position before what the record reaches back to.
	if _, _, err := rec.Since(ctx, day, lpos); err != nil {
		t.Fatal(err)
	}
	_, before := follower.Reads()
	got, _, err := follower.Since(ctx, day, usagelog.PosOf(time.Time{}, 0))
	if _, after := follower.Reads(); err != nil || after != before+1 || len(batches(got)) != 12 {
		t.Errorf("before the record: %v %v, read by the store %d times", batches(got), err, after-before)
	}
}

func TestRecorderRefusesAGap(t *testing.T) {
	r := NewRecorder(usagelog.Memory())
	p := func(n int) usagelog.Pos { return usagelog.PosOf(time.Time{}, n) }
	c := func(seq uint64) []analytics.UsageChange {
		return []analytics.UsageChange{{Batch: analytics.UsageBatch{Edge: "e", Seq: seq}, Subject: "s", Calls: 1}}
	}
	now := time.Now()
	r.windows = []window{
		{day: day, from: p(0), to: p(2), changes: c(1), at: now},
		{day: day, from: p(2), to: p(5), changes: c(2), at: now},
		{day: day, from: p(7), to: p(9), changes: c(3), at: now}, // a read failed between 5 and 7
	}
	if got, next, ok := r.answer(day, p(1)); ok {
		t.Errorf("across a gap: %v %v", got, next)
	}
	if got, next, ok := r.answer(day, p(8)); !ok || len(got) != 1 || next != p(9) {
		t.Errorf("after the gap: %v %v %v", got, next, ok)
	}
	if got, next, ok := r.answer(day, p(20)); !ok || len(got) != 1 || next != p(20) {
		t.Errorf("ahead of the record: %v %v %v (want the last read and the position asked)", got, next, ok)
	}
}

// TestRecorderRefusesAReadThatReachesFarBack: when the read that holds
// the position started long before it (the leader's syncs stalled), the
// store answers, so that batches applied long ago are not brought again.
func TestRecorderRefusesAReadThatReachesFarBack(t *testing.T) {
	r := NewRecorder(usagelog.Memory())
	at := func(sec int) usagelog.Pos { return usagelog.PosOf(day.Add(time.Duration(sec)*time.Second), 0) }
	now := time.Now()
	r.windows = []window{
		{day: day, from: at(0), to: at(2), at: now},
		{day: day, from: at(2), to: at(40), at: now}, // 38 s in one read
	}
	if _, _, ok := r.answer(day, at(3)); !ok {
		t.Error("a position 1 s into a read: refused")
	}
	if _, _, ok := r.answer(day, at(30)); ok {
		t.Error("a position 28 s into a read: answered")
	}
}

func TestRecorderKeepsTwoMinutes(t *testing.T) {
	base := usagelog.Memory()
	r := NewRecorder(base)
	clock := time.Now()
	r.now = func() time.Time { return clock }
	ctx := context.Background()
	pos := usagelog.PosOf(time.Time{}, 0)
	for range 3 {
		_, pos, _ = r.Since(ctx, day, pos)
		clock = clock.Add(time.Minute)
	}
	_, _, _ = r.Since(ctx, day, pos)
	if len(r.windows) != 3 {
		t.Errorf("%d reads kept, want the 3 of the last two minutes", len(r.windows))
	}
}

func TestRecorderRefusesBadQueries(t *testing.T) {
	srv := httptest.NewServer(NewRecorder(usagelog.Memory()))
	defer srv.Close()
	for _, q := range []string{"", "?day=2026-11-26", "?day=x&at=0&n=0", "?day=2026-11-26&at=x&n=0", "?day=2026-11-26&at=0&n=-1"} {
		resp, err := http.Get(srv.URL + q)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%q: %d", q, resp.StatusCode)
		}
	}
}

// TestKeysGate follows a leader's key list version: a reload when it
// moves and at least every few minutes; while the leader cannot say, a
// reload at an edge's own rhythm; a failed reload retried at that rhythm.
func TestKeysGate(t *testing.T) {
	var version atomic.Value
	version.Store("v1")
	var up atomic.Bool
	up.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		json.NewEncoder(w).Encode(keysAnswer{Version: version.Load().(string)})
	}))
	defer srv.Close()
	g := NewKeysGate(&Client{Leader: func() string { return srv.URL }}, 5*time.Minute, 10*time.Second)
	clock := time.Now()
	g.now = func() time.Time { return clock }
	ctx := context.Background()
	step := func(d time.Duration, want bool, loaded bool, what string) {
		t.Helper()
		clock = clock.Add(d)
		if got := g.Load(ctx); got != want {
			t.Fatalf("%s: reload %v, want %v", what, got, want)
		}
		if got := g.Load(ctx); got && !want {
			t.Fatalf("%s: asked twice", what)
		}
		if want && loaded {
			g.Loaded()
		}
	}
	step(0, true, true, "the first tick")
	step(time.Second, false, false, "nothing changed")
	version.Store("v2")
	step(time.Second, true, false, "the list changed, the reload fails")
	step(time.Second, false, false, "a failed reload is not tried at every tick")
	step(10*time.Second, true, true, "a failed reload tried again at the edge's rhythm")
	step(time.Second, false, false, "nothing changed since")
	step(5*time.Minute, true, true, "every five minutes regardless")
	up.Store(false)
	step(time.Second, false, false, "the leader cannot say, within the rhythm")
	step(10*time.Second, true, true, "the leader cannot say: the edge's own rhythm")
}
