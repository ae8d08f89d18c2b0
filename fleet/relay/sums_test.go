package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// fleet is a leader whose usage store records its reads, served over
// HTTP, and a follower asking it, over one store.
type fleet struct {
	base     usagelog.Store
	leader   *limits.Limiter
	follower *limits.Limiter
	store    *Store
	url      atomic.Value // the leader's address as the follower knows it
	srv      *httptest.Server
}

// overlapping is a store whose reads of the log start well before the
// position asked, as those of ClickHouse do (by the log overlap).
type overlapping struct{ usagelog.Store }

func (o overlapping) Since(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, usagelog.Pos, error) {
	at, n := pos.Parts()
	return o.Store.Since(ctx, day, usagelog.PosOf(at, max(0, n-1000)))
}

var shared = limits.Subject{Addr: netip.MustParseAddr("192.0.2.7")}

// newFleet starts a fleet of two edges whose day limit is perDay; serve
// wraps the leader's handler (nil: as it is).
func newFleet(t *testing.T, perDay uint64, serve func(http.Handler) http.Handler) *fleet {
	t.Helper()
	now := day.Add(10 * time.Hour)
	cfg := limits.DefaultConfig()
	cfg.Anonymous = limits.Policy{PerMinute: 1000, PerDay: perDay}
	cfg.Now = func() time.Time { return now }
	f := &fleet{base: usagelog.Memory()}
	rec := NewRecorder(overlapping{f.base})
	var h http.Handler = rec
	if serve != nil {
		h = serve(rec)
	}
	f.srv = httptest.NewServer(h)
	t.Cleanup(f.srv.Close)
	f.url.Store(f.srv.URL)
	f.store = NewStore(f.base, &Client{Leader: func() string { return f.url.Load().(string) }})
	f.leader, f.follower = limits.New(cfg, rec), limits.New(cfg, f.store)
	f.sync(t, f.leader)
	f.sync(t, f.follower)
	return f
}

func (f *fleet) sync(t *testing.T, l *limits.Limiter) {
	t.Helper()
	if err := l.Usage.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// admit makes n calls of s on l and returns how many were admitted.
func admit(l *limits.Limiter, s limits.Subject, n int) int {
	admitted := 0
	for range n {
		if l.Admit(s, 0, time.Time{}).Outcome == ratelimit.Admitted {
			admitted++
		}
	}
	return admitted
}

// writeBatches writes one batch for each of edges, each with calls of
// the shared subject and of subjects more subjects of its own.
func writeBatches(t *testing.T, store usagelog.Store, edges int, calls func(edge int) uint64, subjects int) {
	t.Helper()
	for e := range edges {
		deltas := []analytics.UsageDelta{{Day: day, Subject: shared.String(), Calls: calls(e)}}
		for i := range subjects {
			deltas = append(deltas, analytics.UsageDelta{Day: day, Subject: fmt.Sprintf("subject-%d", i), Calls: 1})
		}
		if err := store.Add(context.Background(), analytics.UsageBatch{Edge: fmt.Sprintf("edge-%d", e), Seq: 1}, deltas, false); err != nil {
			t.Fatal(err)
		}
	}
}

// get asks the leader from the start of the day, as sums or as rows.
func get(t *testing.T, srv string, sum bool) (usageAnswer, int) {
	t.Helper()
	q := url.Values{"day": {day.Format(time.DateOnly)}, "at": {"0"}, "n": {"0"}}
	if sum {
		q.Set("sum", "1")
	}
	resp, err := http.Get(srv + UsagePath + "?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("leader answered %d %s (%v)", resp.StatusCode, body, err)
	}
	var a usageAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	return a, len(body)
}

// TestFollowerGetsSums has three edges write a batch each, of a subject
// they share and of the same 100 others, and the follower write one of
// its own: asked for sums, the leader answers one total per subject,
// each batch counted once though two of its reads brought them, in a
// third of the bytes of the rows; the follower counts every call once,
// its own settled, and admits exactly what is left of the day.
func TestFollowerGetsSums(t *testing.T) {
	const edges, perDay = 3, 100
	f := newFleet(t, perDay, nil)
	if got := admit(f.follower, shared, 4); got != 4 {
		t.Fatalf("follower admitted %d of its first 4 calls", got)
	}
	if err := f.follower.Usage.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeBatches(t, f.base, edges, func(e int) uint64 { return uint64(5 + e) }, 100)
	f.sync(t, f.leader)
	f.sync(t, f.leader) // a second read from the same position: the reads overlap

	sums, sumBytes := get(t, f.srv.URL, true)
	rows, rowBytes := get(t, f.srv.URL, false)
	t.Logf("%d edges: rows %d B, sums %d B", edges, rowBytes, sumBytes)
	if len(sums.Changes) != 0 || len(sums.Totals) != 101 || len(sums.Batches) != edges+1 {
		t.Fatalf("sums: %d rows, %d totals, %d batches; want 0, 101, %d", len(sums.Changes), len(sums.Totals), len(sums.Batches), edges+1)
	}
	if got, want := sums.Totals[shared.String()], uint64(4+5+6+7); got != want {
		t.Fatalf("shared subject's total %d, want %d", got, want)
	}
	if got := sums.Totals["subject-0"]; got != edges {
		t.Fatalf("subject-0's total %d, want %d", got, edges)
	}
	if rows.Sum || len(rows.Changes) != 2*(edges*101+1) {
		t.Fatalf("rows: %d rows, totals %v; want %d rows and no totals", len(rows.Changes), rows.Totals != nil, 2*(edges*101+1))
	}
	if sumBytes*edges > rowBytes {
		t.Fatalf("sums take %d B, rows %d B: want the sums %d times smaller at least", sumBytes, rowBytes, edges)
	}

	f.sync(t, f.follower)
	if relayed, directly := f.store.Reads(); relayed != 1 || directly != 0 {
		t.Fatalf("follower's reads: %d relayed, %d direct; want 1, 0", relayed, directly)
	}
	if n := f.follower.Usage.SumsRefused(); n != 0 {
		t.Fatalf("follower refused %d answers as sums", n)
	}
	if sums, rows := f.store.Forms(); sums != 1 || rows != 0 {
		t.Fatalf("follower got %d answers as sums and %d as rows; want 1, 0", sums, rows)
	}
	left := perDay - (4 + 5 + 6 + 7)
	if got := admit(f.follower, shared, perDay); got != left {
		t.Fatalf("follower admitted %d calls, want the %d left of the day", got, left)
	}
}

// TestFollowerReadsAnOldLeadersRows has the follower ask a leader of the
// release before, which does not know sum=1 and answers rows: the
// follower counts them as before.
func TestFollowerReadsAnOldLeadersRows(t *testing.T) {
	const perDay = 50
	old := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			q.Del("sum")
			r.URL.RawQuery = q.Encode()
			h.ServeHTTP(w, r)
		})
	}
	f := newFleet(t, perDay, old)
	admit(f.follower, shared, 2)
	if err := f.follower.Usage.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	writeBatches(t, f.base, 3, func(int) uint64 { return 4 }, 10)
	f.sync(t, f.leader)
	f.sync(t, f.follower)
	if relayed, directly := f.store.Reads(); relayed != 1 || directly != 0 {
		t.Fatalf("follower's reads: %d relayed, %d direct; want 1, 0", relayed, directly)
	}
	if sums, rows := f.store.Forms(); sums != 0 || rows != 1 {
		t.Fatalf("follower got %d answers as sums and %d as rows; want 0, 1", sums, rows)
	}
	if got, want := admit(f.follower, shared, perDay), perDay-2-12; got != want {
		t.Fatalf("follower admitted %d calls, want the %d left of the day", got, want)
	}
}

// TestSumsWithAnAppliedBatchAreReadAsRows has the follower apply a batch
// from its own read of the store while the leader was out of reach; the
// leader's next answer sums that batch again: the follower reads the
// rows instead, and counts it once.
func TestSumsWithAnAppliedBatchAreReadAsRows(t *testing.T) {
	const perDay = 50
	f := newFleet(t, perDay, nil)
	f.url.Store("")
	writeBatches(t, f.base, 1, func(int) uint64 { return 7 }, 0)
	f.sync(t, f.follower) // reads the store: edge-0's batch applied
	f.url.Store(f.srv.URL)
	if err := f.base.Add(context.Background(), analytics.UsageBatch{Edge: "edge-1", Seq: 1},
		[]analytics.UsageDelta{{Day: day, Subject: shared.String(), Calls: 9}}, false); err != nil {
		t.Fatal(err)
	}
	f.sync(t, f.leader) // one read bringing both batches
	f.sync(t, f.follower)
	if got, want := admit(f.follower, shared, perDay), perDay-7-9; got != want {
		t.Fatalf("follower admitted %d calls, want the %d left of the day", got, want)
	}
	if n := f.follower.Usage.SumsRefused(); n != 1 {
		t.Fatalf("follower refused %d answers as sums, want 1", n)
	}
	if sums, rows := f.store.Forms(); sums != 1 || rows != 1 {
		t.Fatalf("follower got %d answers as sums and %d as rows; want 1, 1", sums, rows)
	}
}

// TestOldFollowerGetsRows checks that a follower of the release before,
// which asks without sum=1, gets the rows as before.
func TestOldFollowerGetsRows(t *testing.T) {
	f := newFleet(t, 50, nil)
	writeBatches(t, f.base, 2, func(int) uint64 { return 1 }, 0)
	f.sync(t, f.leader)
	a, _ := get(t, f.srv.URL, false)
	if a.Sum || a.Totals != nil || a.Batches != nil || len(a.Changes) != 2 || !strings.HasPrefix(a.Changes[0].Edge, "edge-") {
		t.Fatalf("answer without sum=1: %+v; want the 2 rows only", a)
	}
}

// TestSumsFollowNewReads checks that the answer made once for the
// followers asking from a position changes when the leader reads again.
func TestSumsFollowNewReads(t *testing.T) {
	f := newFleet(t, 50, nil)
	writeBatches(t, f.base, 2, func(int) uint64 { return 1 }, 0)
	f.sync(t, f.leader)
	if a, _ := get(t, f.srv.URL, true); a.Totals[shared.String()] != 2 {
		t.Fatalf("totals %v, want 2 calls of the shared subject", a.Totals)
	}
	if err := f.base.Add(context.Background(), analytics.UsageBatch{Edge: "edge-9", Seq: 1},
		[]analytics.UsageDelta{{Day: day, Subject: shared.String(), Calls: 5}}, false); err != nil {
		t.Fatal(err)
	}
	f.sync(t, f.leader)
	if a, _ := get(t, f.srv.URL, true); a.Totals[shared.String()] != 7 || len(a.Batches) != 3 {
		t.Fatalf("after another read: totals %v, batches %v; want 7 calls in 3 batches", a.Totals, a.Batches)
	}
}

// TestFollowerReservesThroughTheLeader: a key's call on a follower
// waits for a reservation of its calls (limits' reserve.go), written and
// read back before it is admitted. The leader has not read the log since
// the write, so its record lacks it: the follower asks the leader for a
// fresh read (SinceFresh), the leader reads the log for it, and the call
// is admitted at once; no read of the follower's goes to the log itself.
func TestFollowerReservesThroughTheLeader(t *testing.T) {
	f := newFleet(t, 50, nil)
	key := limits.Subject{Key: "edge_follower"}
	f.sync(t, f.leader) // the leader's record reaches the follower's position,
	f.sync(t, f.follower)
	if relayed, directly := f.store.Reads(); relayed != 1 || directly != 0 {
		t.Fatalf("follower's reads: %d relayed, %d direct; want 1, 0", relayed, directly)
	}
	relayedBefore, _ := f.store.Reads()
	if d := f.follower.Admit(key, 100, time.Time{}); d.Outcome != ratelimit.Admitted || d.Remaining != 99 {
		t.Fatalf("a key's first call on the follower: %+v, want admitted with 99 left", d)
	}
	relayed, directly := f.store.Reads()
	if directly != 0 || relayed != relayedBefore+1 || f.store.Fresh() != 1 {
		t.Fatalf("follower's reads for the reservation: %d relayed (%d fresh), %d direct; want 1 (1), 0",
			relayed-relayedBefore, f.store.Fresh(), directly)
	}
	f.sync(t, f.leader)
	f.sync(t, f.follower)
	if relayed, _ := f.store.Reads(); relayed != relayedBefore+2 || f.store.Fresh() != 1 {
		t.Fatalf("the follower's sync with no one waiting: %d relayed reads (%d fresh), want %d (1)", relayed, f.store.Fresh(), relayedBefore+2)
	}
	// The leader counts the follower's reservation as used.
	used := 0
	for range 100 {
		if f.leader.Admit(key, 100, time.Time{}).Outcome == ratelimit.Admitted {
			used++
		}
	}
	if used != 100-4 {
		t.Fatalf("the leader admitted %d of the key's calls after the follower reserved 4; want 96", used)
	}
}

// countedReads is a store that counts its reads of the log, each held
// until hold lets it go (nil: at once).
type countedReads struct {
	usagelog.Store
	reads atomic.Int64
	hold  chan struct{}
}

func (c *countedReads) Since(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, usagelog.Pos, error) {
	c.reads.Add(1)
	if c.hold != nil {
		<-c.hold
	}
	return c.Store.Since(ctx, day, pos)
}

// TestFreshAsksShareReads: a fresh ask (fresh=1) is answered with a read
// of the log begun after it arrived, holding the batch written just
// before it; asks that arrive together share reads: eight followers
// asking while the leader's read is under way cost it one more read, not
// eight; an ask without fresh=1 is answered from the record alone.
func TestFreshAsksShareReads(t *testing.T) {
	base := usagelog.Memory()
	store := &countedReads{Store: base}
	rec := NewRecorder(store)
	if _, _, err := rec.Since(context.Background(), day, usagelog.Pos{}); err != nil { // the leader's own sync
		t.Fatal(err)
	}
	var arrived atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		rec.ServeHTTP(w, r)
	}))
	defer srv.Close()
	ask := func(fresh bool) usageAnswer {
		q := url.Values{"day": {day.Format(time.DateOnly)}, "at": {"0"}, "n": {"0"}, "sum": {"1"}}
		if fresh {
			q.Set("fresh", "1")
		}
		resp, err := http.Get(srv.URL + UsagePath + "?" + q.Encode())
		if err != nil {
			t.Error(err)
			return usageAnswer{}
		}
		defer resp.Body.Close()
		var a usageAnswer
		if err := json.NewDecoder(resp.Body).Decode(&a); err != nil {
			t.Error(err)
		}
		return a
	}
	writeBatches(t, base, 1, func(int) uint64 { return 4 }, 0) // a follower's reservation
	if a := ask(false); a.Totals[shared.String()] != 0 || store.reads.Load() != 1 {
		t.Fatalf("an ask without fresh=1: totals %v after %d reads, want none from the record of one read", a.Totals, store.reads.Load())
	}
	// The first fresh ask's read is held until seven more have arrived:
	// those share the one read after it.
	store.hold = make(chan struct{})
	answers := make(chan usageAnswer, 8)
	for range 8 {
		go func() { answers <- ask(true) }()
	}
	for deadline := time.Now().Add(10 * time.Second); arrived.Load() < 1+8 || store.reads.Load() < 2; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			close(store.hold)
			t.Fatalf("%d asks arrived and %d reads of the log began: no fresh ask made a read", arrived.Load(), store.reads.Load())
		}
	}
	time.Sleep(20 * time.Millisecond) // the seven others wait on the first
	close(store.hold)
	for range 8 {
		if a := <-answers; a.Totals[shared.String()] != 4 {
			t.Fatalf("a fresh ask: totals %v, want the 4 calls written before it", a.Totals)
		}
	}
	if n := store.reads.Load() - 1; n > 2 {
		t.Fatalf("eight fresh asks made %d reads of the log, want at most 2", n)
	}
}

// TestPausedLeaderIsAskedOnce: a leader that takes a follower's ask and
// never answers (a paused process) costs the follower one wait of its
// client's timeout; the reads after it go to the store at once, without
// asking the leader again for a while.
func TestPausedLeaderIsAskedOnce(t *testing.T) {
	var asked atomic.Int64
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	base := usagelog.Memory()
	store := NewStore(base, &Client{Leader: func() string { return srv.URL }, HTTP: &http.Client{Timeout: 100 * time.Millisecond}})
	for i := range 5 {
		if _, _, err := store.Since(context.Background(), day, usagelog.Pos{}); err != nil {
			t.Fatalf("read %d: %v", i, err)
		}
	}
	if relayed, directly := store.Reads(); asked.Load() != 1 || relayed != 0 || directly != 5 {
		t.Fatalf("five reads with the leader paused: the leader asked %d times, %d reads relayed, %d direct; want 1, 0, 5", asked.Load(), relayed, directly)
	}
}
