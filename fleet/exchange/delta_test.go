package exchange

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/builder"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/listq"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// changed returns a state after r: every step-th listing's users one
// more, and a listing added (as a refresh that read a crawl gives).
func changed(r *replica.Replica, step int, gen uint64) *replica.Replica {
	ls := slices.Clone(r.All())
	for i := 0; i < len(ls); i += step {
		u, _ := ls[i].Usage()
		ls[i].SetUsage(u+1, true)
	}
	add := ls[0]
	add.ID = add.ID + "-new-" + strings.Repeat("x", int(gen%7))
	ls = append(ls, add)
	info := r.Info()
	info.Generation = gen
	return replica.New(ls, info).WithChanges(r.Changes())
}

// takes fetches the leader's state from have (a 304 gives cur back) and
// checks that the follower holds exactly want.
func takes(t *testing.T, f *Follower, have string, cur *replica.Replica, want *replica.Replica, wantSnaps int64) (*replica.Replica, string) {
	t.Helper()
	got, snaps, tag, err := f.Fetch(context.Background(), have, replica.ReadOptions{Generation: 9, Prev: cur})
	if err != nil {
		t.Fatal(err)
	}
	if got == nil {
		got, snaps = cur, wantSnaps
	}
	if replica.DigestOf(got, snaps) != replica.DigestOf(want, wantSnaps) {
		t.Fatalf("the follower holds a state of %d listings that is not the leader's (%d)", got.Len(), want.Len())
	}
	if d, ok := parseStateTag(tag); !ok || d != replica.DigestOf(want, wantSnaps) {
		t.Fatalf("tag %s does not name the state held", tag)
	}
	return got, tag
}

// A follower that holds the leader's previous state takes what changed,
// not the whole state; one a few states behind takes the deltas one after
// another; the bytes are counted by kind on both sides, and the
// generation each holds is the leader's.
func TestFollowerTakesWhatChanged(t *testing.T) {
	lcfg, fcfg := DefaultConfig(), DefaultConfig()
	lcfg.Metrics, fcfg.Metrics = NewMetrics(), NewMetrics()
	l := startLeader(t, lcfg)
	f := follower(t, fcfg, l.url, false)

	s := synth(10000, 1)
	l.offer(t, s, 100)
	cur, tag := takes(t, f, "", nil, s, 100)
	whole := fcfg.Metrics.Bytes("received", "whole")
	if whole == 0 || fcfg.Metrics.Bytes("received", "delta") != 0 || lcfg.Metrics.Bytes("sent", "whole") != whole {
		t.Fatalf("whole state: received %v, sent %v", whole, lcfg.Metrics.Bytes("sent", "whole"))
	}

	// One refresh: 1 listing in 288 changed.
	s = changed(s, 288, 2)
	l.offer(t, s, 101)
	cur, tag = takes(t, f, tag, cur, s, 101)
	delta := fcfg.Metrics.Bytes("received", "delta")
	if delta == 0 || delta > whole/100 || fcfg.Metrics.Bytes("received", "whole") != whole {
		t.Fatalf("a refresh of 1 in 288 listings: %v bytes of delta for a whole state of %v", delta, whole)
	}
	if lcfg.Metrics.Bytes("sent", "delta") != delta || fcfg.Metrics.Generation() != 2 || lcfg.Metrics.Generation() != 2 {
		t.Errorf("sent %v delta bytes; generations %v and %v, want 2", lcfg.Metrics.Bytes("sent", "delta"), fcfg.Metrics.Generation(), lcfg.Metrics.Generation())
	}

	// Three refreshes while the follower did not ask: three deltas, in turn.
	for gen := uint64(3); gen <= 5; gen++ {
		s = changed(s, 500, gen)
		l.offer(t, s, int64(100+gen))
	}
	cur, tag = takes(t, f, tag, cur, s, 105)
	if fcfg.Metrics.Bytes("received", "whole") != whole || fcfg.Metrics.Generation() != 5 {
		t.Errorf("three deltas behind: took %v bytes whole, holds generation %v", fcfg.Metrics.Bytes("received", "whole")-whole, fcfg.Metrics.Generation())
	}
	// Nothing new: a 304.
	before := fcfg.Metrics.Bytes("received", "delta")
	if got, _, tag2, err := f.Fetch(context.Background(), tag, replica.ReadOptions{Prev: cur}); err != nil || got != nil || tag2 != tag {
		t.Fatalf("nothing new: %v, %v, %s", got, err, tag2)
	}
	if fcfg.Metrics.Bytes("received", "delta") != before {
		t.Error("bytes counted for a 304")
	}
}

// A follower further behind than the deltas the leader keeps takes the
// whole state.
func TestFollowerFarBehindTakesTheWholeState(t *testing.T) {
	lcfg, fcfg := DefaultConfig(), DefaultConfig()
	lcfg.Deltas, fcfg.Metrics = 2, NewMetrics()
	l := startLeader(t, lcfg)
	f := follower(t, fcfg, l.url, false)
	s := synth(3000, 1)
	l.offer(t, s, 1)
	cur, tag := takes(t, f, "", nil, s, 1)
	for gen := uint64(2); gen <= 5; gen++ {
		s = changed(s, 100, gen)
		l.offer(t, s, 1)
	}
	if n := len(l.pub.deltas.Load().order); n != 2 {
		t.Fatalf("the leader keeps %d deltas, want 2", n)
	}
	whole := fcfg.Metrics.Bytes("received", "whole")
	takes(t, f, tag, cur, s, 1)
	if fcfg.Metrics.Bytes("received", "whole") <= whole || fcfg.Metrics.Bytes("received", "delta") != 0 {
		t.Errorf("four states behind of two deltas kept: %v bytes whole, %v of deltas", fcfg.Metrics.Bytes("received", "whole")-whole, fcfg.Metrics.Bytes("received", "delta"))
	}
	left, _ := os.ReadDir(l.pub.cfg.Dir)
	if len(left) != 3 { // the whole state and two deltas
		t.Errorf("the leader's directory holds %d files, want 3", len(left))
	}
}

// A delta that does not give the state it names (damaged on the
// leader's disk, or with a signature that is not the fleet's) is refused
// and counted, and the follower takes the whole state in the same ask.
func TestARefusedDeltaGivesTheWholeState(t *testing.T) {
	for _, c := range []struct {
		name, reason string
		keys         bool
		spoil        func(d *deltaFile)
	}{
		{"damaged", "digest", false, func(d *deltaFile) {
			b, _ := os.ReadFile(d.path)
			b[len(b)/2] ^= 1
			os.WriteFile(d.path, b, 0o644)
		}},
		{"signed by another", "signature", true, func(d *deltaFile) {
			d.sig = keysOf(t, otherToken).SignDelta(d.sum, d.gen, d.base, d.result)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			lcfg, fcfg := DefaultConfig(), DefaultConfig()
			if c.keys {
				lcfg, fcfg = withKeys(lcfg, keysOf(t, testToken)), withKeys(fcfg, keysOf(t, testToken))
			}
			fcfg.Metrics = NewMetrics()
			l := startLeader(t, lcfg)
			f := follower(t, fcfg, l.url, false)
			s := synth(3000, 1)
			l.offer(t, s, 1)
			cur, tag := takes(t, f, "", nil, s, 1)
			s = changed(s, 50, 2)
			l.offer(t, s, 2)
			c.spoil(l.pub.deltas.Load().order[0])
			whole := fcfg.Metrics.Bytes("received", "whole")
			takes(t, f, tag, cur, s, 2)
			if fcfg.Metrics.Refused(c.reason) != 1 || fcfg.Metrics.Refused("delta") != 1 || fcfg.Metrics.Bytes("received", "whole") <= whole {
				t.Errorf("refused %v (%s) and %v (delta); whole bytes %v then %v", fcfg.Metrics.Refused(c.reason), c.reason, fcfg.Metrics.Refused("delta"), whole, fcfg.Metrics.Bytes("received", "whole"))
			}
		})
	}
}

// Edges of two releases: a leader that keeps no deltas (the release
// before: no A-IM, no state tags) gives a follower of this release whole
// states and 304s by ETag; a follower that asks for no delta (the
// release before) gets whole states and 304s from a leader of this one.
func TestDeltasAcrossReleases(t *testing.T) {
	t.Run("an earlier leader", func(t *testing.T) {
		l := startLeader(t, DefaultConfig())
		// The release before: A-IM unknown, no state tag sent.
		target, _ := url.Parse(l.url)
		proxy := httputil.NewSingleHostReverseProxy(target)
		proxy.ModifyResponse = func(r *http.Response) error { r.Header.Del(TagHeader); return nil }
		old := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r.Header.Del("A-IM")
			proxy.ServeHTTP(w, r)
		}))
		t.Cleanup(old.Close)
		fcfg := DefaultConfig()
		fcfg.Metrics = NewMetrics()
		f := follower(t, fcfg, old.URL, false)
		s := synth(2000, 1)
		l.offer(t, s, 1)
		cur, _, tag, err := f.Fetch(context.Background(), "", replica.ReadOptions{})
		if err != nil || strings.HasPrefix(tag, `"state-`) {
			t.Fatalf("from an earlier leader: %v, tag %s (want its ETag)", err, tag)
		}
		if again, _, tag2, err := f.Fetch(context.Background(), tag, replica.ReadOptions{Prev: cur}); err != nil || again != nil || tag2 != tag {
			t.Fatalf("the same state again: %v %v", again, err)
		}
		s = changed(s, 10, 2)
		l.offer(t, s, 2)
		next, _, _, err := f.Fetch(context.Background(), tag, replica.ReadOptions{Prev: cur})
		if err != nil || next == nil || replica.DigestOf(next, 2) != replica.DigestOf(s, 2) || fcfg.Metrics.Bytes("received", "delta") != 0 {
			t.Fatalf("a new state from an earlier leader: %v", err)
		}
	})
	t.Run("an earlier follower", func(t *testing.T) {
		l := startLeader(t, DefaultConfig())
		s := synth(2000, 1)
		l.offer(t, s, 1)
		get := func(inm string) *http.Response {
			req, _ := http.NewRequest(http.MethodGet, l.url+StatePath, nil)
			if inm != "" {
				req.Header.Set("If-None-Match", inm)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp
		}
		first := get("")
		etag := first.Header.Get("ETag")
		if first.StatusCode != http.StatusOK || get(etag).StatusCode != http.StatusNotModified {
			t.Fatalf("a follower of the release before: %s, then %s", first.Status, get(etag).Status)
		}
		l.offer(t, changed(s, 10, 2), 2)
		// Asked without A-IM, from a state the leader keeps a delta of:
		// the whole state, as the release before reads it.
		if resp := get(first.Header.Get(TagHeader)); resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/vnd.edge.snapshot+zstd" {
			t.Errorf("no A-IM: %s %s", resp.Status, resp.Header.Get("Content-Type"))
		}
	})
}

// acceptsDelta reads A-IM as a list, with parameters, in any case.
func TestAcceptsDelta(t *testing.T) {
	for v, want := range map[string]bool{
		"edge-delta": true, "gzip, Edge-Delta;q=1": true, " edge-delta ": true,
		"": false, "edge-deltas": false, "vcdiff": false,
	} {
		if got := acceptsDelta(http.Header{"A-Im": {v}}); got != want {
			t.Errorf("A-IM %q: %v, want %v", v, got, want)
		}
	}
	d := replica.Digest{1, 2, 3}
	if got, ok := parseStateTag(stateTag(d)); !ok || got != d {
		t.Error("a state's tag does not name its digest")
	}
	for _, bad := range []string{"", `"state-"`, `"` + strings.Repeat("ab", 32) + `"`, `state-` + strings.Repeat("ab", 32), `"state-` + strings.Repeat("zz", 32) + `"`} {
		if _, ok := parseStateTag(bad); ok {
			t.Errorf("%q read as a state's tag", bad)
		}
	}
}

// A follower that watches its leader is told of a new state as soon as
// the leader has it: the leader holds the ask (Prefer: wait) while the
// follower's state is the newest, and answers it when a newer one comes.
func TestWatchTellsOfANewState(t *testing.T) {
	l := startLeader(t, DefaultConfig())
	fcfg := DefaultConfig()
	fcfg.Idle = 8 * time.Second // asks held for 3 s
	f := follower(t, fcfg, l.url, false)
	s := synth(2000, 1)
	l.offer(t, s, 1)
	_, tag := takes(t, f, "", nil, s, 1)
	var have atomic.Value
	have.Store(tag)
	told := make(chan struct{}, 16)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f.Watch(ctx, func() string { return have.Load().(string) }, func() { told <- struct{}{} })
	}()
	// Held, then answered 304, then asked again: nothing to tell.
	select {
	case <-told:
		t.Fatal("told of a new state while the follower held the newest")
	case <-time.After(4 * time.Second):
	}
	s = changed(s, 100, 2)
	l.offer(t, s, 2)
	select {
	case <-told:
	case <-time.After(20 * time.Second):
		t.Fatal("not told of the leader's new state")
	}
	cancel()
	<-done
}

// The leader holds an ask from its newest state for the wait it prefers
// (at most its own bound), and answers at once an ask from another.
func TestLeaderHoldsAnAskFromItsNewestState(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Idle = 3 * time.Second // holds at most 2 s
	l := startLeader(t, cfg)
	s := synth(500, 1)
	l.offer(t, s, 1)
	tag := l.pub.cur.Load().tag
	start := time.Now()
	if resp := askState(t, l.url, http.MethodHead, "If-None-Match", tag, "Prefer", "wait=60"); resp.StatusCode != http.StatusNotModified || time.Since(start) < time.Second {
		t.Errorf("an ask from the newest state: %s after %v, want 304 after the leader's bound", resp.Status, time.Since(start))
	}
	if resp := askState(t, l.url, http.MethodHead, "If-None-Match", `"state-`+strings.Repeat("00", 32)+`"`, "Prefer", "wait=60"); resp.StatusCode != http.StatusOK {
		t.Errorf("an ask from another state: %s, want 200 at once", resp.Status)
	}
	for v, want := range map[string]time.Duration{"wait=5": 5 * time.Second, "respond-async, wait=10": 10 * time.Second,
		"Wait = 7": 7 * time.Second, "wait=-1": 0, "wait=x": 0, "": 0, "handling=lenient": 0} {
		if got := preferWait(http.Header{"Prefer": {v}}); got != want {
			t.Errorf("Prefer %q: %v, want %v", v, got, want)
		}
	}
}

// TestWatchToldOnceTheDeltaIsWritten: the leader writes a state's delta
// before its whole file (seconds before, at millions of listings). A watch from the state before,
// which takes deltas (A-IM), is answered 200 with the new tag as soon as
// the delta is written, and the follow job's GET then takes the delta;
// an ask that takes no delta is not held either, and gets the whole state
// it has (304) until the new one is written. (A watch answered 304 from
// the delta's base would keep every follower waiting for the whole file.)
func TestWatchToldOnceTheDeltaIsWritten(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Idle = 3 * time.Second // holds at most 2 s
	l := startLeader(t, cfg)
	s := synth(500, 1)
	l.offer(t, s, 1)
	old := l.pub.cur.Load().tag
	// The next state's delta written, its whole file not yet (as write
	// does it, without the whole file that follows).
	next := changed(s, 10, 2)
	digest := replica.DigestOf(next, 2)
	l.pub.writeDelta(offer{r: next, snapshots: 2}, digest)
	ask := func(method string, header ...string) *http.Response {
		return askState(t, l.url, method, append([]string{"If-None-Match", old, "Prefer", "wait=60"}, header...)...)
	}
	if resp := ask(http.MethodHead, "A-IM", deltaIM); resp.StatusCode != http.StatusOK || resp.Header.Get("ETag") != stateTag(digest) {
		t.Errorf("a watch from the state before, the delta written: %s ETag %q, want 200 and the new state's tag %q",
			resp.Status, resp.Header.Get("ETag"), stateTag(digest))
	}
	if resp := ask(http.MethodGet, "A-IM", deltaIM); resp.StatusCode != http.StatusIMUsed {
		t.Errorf("the follow job's ask: %s, want 226 and the delta", resp.Status)
	}
	if resp := ask(http.MethodHead); resp.StatusCode != http.StatusNotModified {
		t.Errorf("an ask that takes no delta, before the whole file: %s, want 304 (the whole state it holds)", resp.Status)
	}
}

// askState asks the leader at url for its state with the headers given as
// name, value pairs, reads the answer's body and returns the answer.
func askState(t *testing.T, url, method string, header ...string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, url+StatePath, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// A follower without room for a second whole state (NoWhole) takes what
// changed as any follower does, and, when the leader has only the whole
// state for it, takes none of its bytes and says so (builder.ErrNoRoom).
func TestFollowerWithoutRoomTakesOnlyWhatChanged(t *testing.T) {
	lcfg, fcfg := DefaultConfig(), DefaultConfig()
	lcfg.Deltas, fcfg.Metrics = 2, NewMetrics()
	l := startLeader(t, lcfg)
	f := follower(t, fcfg, l.url, false)
	s := synth(3000, 1)
	l.offer(t, s, 1)
	cur, tag := takes(t, f, "", nil, s, 1)
	whole := fcfg.Metrics.Bytes("received", "whole")

	s = changed(s, 100, 2)
	l.offer(t, s, 1)
	got, _, next, err := f.Fetch(context.Background(), tag, replica.ReadOptions{Prev: cur, NoWhole: true})
	if err != nil || got == nil || replica.DigestOf(got, 1) != replica.DigestOf(s, 1) {
		t.Fatalf("without room, one state behind: %v, %v", got, err)
	}
	if fcfg.Metrics.Bytes("received", "delta") == 0 {
		t.Fatal("took no delta")
	}
	cur, tag = got, next

	for gen := uint64(3); gen <= 6; gen++ { // past the two deltas kept
		s = changed(s, 100, gen)
		l.offer(t, s, 1)
	}
	got, _, _, err = f.Fetch(context.Background(), tag, replica.ReadOptions{Prev: cur, NoWhole: true})
	if !errors.Is(err, builder.ErrNoRoom) || got != nil {
		t.Fatalf("without room, four states behind: %v, %v; want builder.ErrNoRoom", got, err)
	}
	if fcfg.Metrics.Bytes("received", "whole") != whole {
		t.Fatalf("took %v bytes of a whole state it has no room for", fcfg.Metrics.Bytes("received", "whole")-whole)
	}
	// With room again, the whole state.
	takes(t, f, tag, cur, s, 1)
}

// A follower that takes a delta builds its figures from the ones it
// held (figures.BuildFrom: the listing queries' orders merged, not
// sorted), and they answer every sort, of every store and of all, as
// figures built whole from the same state.
//
// Each delta is applied into the room the follower made ahead for it
// (replica.Spare) once it had published the state before. The last ask
// takes a chain of two deltas, and builds from the figures before both.
func TestFollowerBuildsOnTheFiguresBefore(t *testing.T) {
	l := startLeader(t, DefaultConfig())
	f := follower(t, DefaultConfig(), l.url, false)
	pub := &views.Published[served.State]{}
	var logs lockedLog
	v := builder.New(nil, pub, slog.New(slog.NewTextHandler(&logs, nil)))
	v.FollowFrom(f)
	follow := v.FollowJob("@every 1h")
	ctx := context.Background()
	s := synth(3000, 1)
	l.offer(t, s, 1)
	if err := follow.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if st := pub.Load(); st == nil || st.Figures == nil || st.Figures.Merged() {
		t.Fatalf("the first state, whole: %+v", st)
	}
	for gen := uint64(2); gen <= 6; gen++ {
		for deadline := time.Now().Add(30 * time.Second); v.SpareListings() < s.Len()+1; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("state %d: no room made ahead for %d listings after the state before (%d)", gen, s.Len()+1, v.SpareListings())
			}
		}
		last := gen
		if gen == 6 {
			// Two states since the follower's last ask: it takes both
			// deltas and builds once, from the figures of the state it
			// held before the first (replica.Applied composed).
			s = changed(s, 70, gen)
			l.offer(t, s, 1)
			last++
		}
		s = changed(s, 50, last)
		l.offer(t, s, 1)
		before := logs.String()
		if err := follow.Run(ctx); err != nil {
			t.Fatal(err)
		}
		read := strings.TrimPrefix(logs.String(), before)
		if !strings.Contains(read, "fleet state read") || !strings.Contains(read, "into_spare=true") {
			t.Fatalf("state %d: the follower's log does not say it read the delta into the room made for it:\n%s", gen, read)
		}
		st := pub.Load()
		if replica.DigestOf(st.Replica, 1) != replica.DigestOf(s, 1) || !st.Figures.Merged() {
			t.Fatalf("state %d: the leader's %v, built from the figures before %v", gen,
				replica.DigestOf(st.Replica, 1) == replica.DigestOf(s, 1), st.Figures.Merged())
		}
		sameAnswers(t, fmt.Sprint("state ", gen), st.Figures, figures.Build(st.Replica, 1))
	}
}

// lockedLog is a log the jobs write (some from goroutines of their own)
// while the test reads it.
type lockedLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// sameAnswers fails t unless got and want list the same listings for
// every sort, both ways, of each store and of all.
func sameAnswers(t *testing.T, what string, got, want *figures.Figures) {
	t.Helper()
	stores := []*views.Store{nil}
	for _, s := range views.Stores {
		stores = append(stores, &s)
	}
	ids := func(page []*views.Listing) []string {
		out := make([]string, len(page))
		for i, l := range page {
			out[i] = l.Store.String() + "/" + l.ID
		}
		return out
	}
	for _, spec := range listq.Sorts() {
		for _, store := range stores {
			for _, asc := range []bool{false, true} {
				if spec.NeedsStore && store == nil {
					continue
				}
				for page := 1; page <= 3; page++ {
					q := listq.Query{Store: store, Sort: spec.Sort, Asc: asc, Page: page, PageSize: 200}
					gn, gp, _ := got.Listings().Page(&q)
					wn, wp, _ := want.Listings().Page(&q)
					if g, w := ids(gp), ids(wp); gn != wn || !slices.Equal(g, w) {
						at := 0
						for at < min(len(g), len(w)) && g[at] == w[at] {
							at++
						}
						t.Fatalf("%s: sort %s (store %v, asc %v) page %d: %d listings (want %d), the first of %d differing at %d", what, spec.Sort, store, asc, page, gn, wn, len(w), at)
					}
				}
			}
		}
	}
}

// offerDelta offers r and waits until its delta is out (the leader's
// newest state), not its whole file.
func (l *leader) offerDelta(t *testing.T, r *replica.Replica, snapshots int64) {
	t.Helper()
	l.pub.Offer(r, snapshots)
	deadline := time.Now().Add(10 * time.Second)
	for set := l.pub.deltas.Load(); set == nil || set.gen != r.Info().Generation; set = l.pub.deltas.Load() {
		if time.Now().After(deadline) {
			t.Fatal("the offered state's delta was not written")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The leader writes a state whole Config.WholeAfter after its delta: the
// follower takes the delta while the whole waits; an edge that joins
// meanwhile takes the whole state before, then the delta; and the whole
// is written once, of the newest state, when its time comes (not once a
// state).
func TestWholeStateWaitsForTheDelta(t *testing.T) {
	cfg := DefaultConfig()
	cfg.WholeAfter = time.Hour
	l := startLeaderAsIs(t, cfg)
	s := synth(2000, 1)
	l.offer(t, s, 1) // the first state: whole at once
	fcfg := DefaultConfig()
	fcfg.Metrics = NewMetrics()
	f := follower(t, fcfg, l.url, false)
	cur, tag := takes(t, f, "", nil, s, 1)
	whole := fcfg.Metrics.Bytes("received", "whole")

	s = changed(s, 50, 2)
	l.offerDelta(t, s, 1)
	takes(t, f, tag, cur, s, 1)
	if fcfg.Metrics.Bytes("received", "delta") == 0 || fcfg.Metrics.Bytes("received", "whole") != whole {
		t.Fatal("the follower did not take the delta alone")
	}
	if n := l.pub.Written(); n != 1 {
		t.Fatalf("%d whole states written before their time, want the first alone", n)
	}
	// A watch by the whole file's ETag (an edge of the release before,
	// which takes no deltas) is held: it has nothing newer to take. One
	// by the state before's tag is answered: the delta is for it.
	if old := l.pub.cur.Load(); !l.pub.current(old.etag) || l.pub.current(old.tag) {
		t.Fatalf("while the whole waits: the whole file's ETag current %v, the state before's tag %v", l.pub.current(old.etag), l.pub.current(old.tag))
	}
	// An edge that joins: the whole state before, then the delta, in
	// one ask: it is handed the newest state.
	jcfg := DefaultConfig()
	jcfg.Metrics = NewMetrics()
	joined := follower(t, jcfg, l.url, false)
	newest, newestTag := takes(t, joined, "", nil, s, 1)
	if jcfg.Metrics.Bytes("received", "whole") == 0 || jcfg.Metrics.Bytes("received", "delta") == 0 {
		t.Fatal("the edge that joined did not take the whole state before and the delta")
	}
	takes(t, joined, newestTag, newest, s, 1) // and then nothing new

	// Its time come, the newest state is written whole, once.
	cfg.WholeAfter = 2 * time.Second // the three offers below take milliseconds
	l = startLeaderAsIs(t, cfg)
	s = synth(2000, 1)
	l.offer(t, s, 1)
	for gen := uint64(2); gen <= 4; gen++ {
		s = changed(s, 50, gen)
		l.offerDelta(t, s, 1)
	}
	deadline := time.Now().Add(10 * time.Second)
	for l.pub.Written() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("the newest state was not written whole")
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if f := l.pub.cur.Load(); l.pub.Written() != 2 || f.gen != 4 {
		t.Fatalf("%d whole states written, the newest of generation %d; want 2, the newest 4", l.pub.Written(), f.gen)
	}
}
