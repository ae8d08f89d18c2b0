package exchange

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// leader is a publisher serving on loopback (Serve): over TLS with the
// fleet's certificates when cfg has keys.
type leader struct {
	pub     *Publisher
	url     string
	leading atomic.Bool
}

// startLeader starts a leader of cfg that writes each state whole at once
// (Config.WholeAfter 0), as most tests wait for; startLeaderAsIs keeps
// cfg's.
func startLeader(t *testing.T, cfg Config) *leader {
	t.Helper()
	cfg.WholeAfter = 0
	return startLeaderAsIs(t, cfg)
}

func startLeaderAsIs(t *testing.T, cfg Config) *leader {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startLeaderOn(t, cfg, ln)
}

// startLeaderOn is startLeaderAsIs serving on ln.
func startLeaderOn(t *testing.T, cfg Config, ln net.Listener) *leader {
	t.Helper()
	l := &leader{}
	l.leading.Store(true)
	cfg.Dir = t.TempDir()
	pub, err := NewPublisher(cfg, l.leading.Load, slog.New(slog.DiscardHandler))
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go pub.Run(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := pub.Serve(ctx, ln); err != nil {
			t.Error(err)
		}
	}()
	t.Cleanup(func() { cancel(); <-served })
	l.pub, l.url = pub, "http://"+ln.Addr().String()
	if cfg.Keys != nil {
		l.url = "https://" + ln.Addr().String()
	}
	return l
}

// writeWait bounds offer's wait for a state to be written: a bound on a
// write that never comes, not on speed. Alone, under the race detector,
// the package's largest state (10,000 listings) is written in under a
// second, but beside cmd/edge's process fault test in make test a write
// can take many times as long.
const writeWait = 2 * time.Minute

// offer offers r and waits until it is written, woken by the
// publisher's notice of each newer state it serves (Publisher.notify).
func (l *leader) offer(t *testing.T, r *replica.Replica, snapshots int64) {
	t.Helper()
	n := l.pub.Written()
	l.pub.Offer(r, snapshots)
	timeout := time.NewTimer(writeWait)
	defer timeout.Stop()
	for {
		changed := *l.pub.changed.Load() // before the count: a write after it closes this channel
		if l.pub.Written() != n {
			return
		}
		select {
		case <-changed:
		case <-timeout.C:
			t.Fatalf("the offered state was not written within %v", writeWait)
		}
	}
}

// follower returns a follower of the leader at addr, with a directory of
// its own that must be empty when the test ends: a state taken is read
// and removed, whether it was good or not.
func follower(t *testing.T, cfg Config, addr string, leading bool) *Follower {
	t.Helper()
	cfg.Dir = t.TempDir()
	t.Cleanup(func() {
		if left, _ := os.ReadDir(cfg.Dir); len(left) > 0 {
			t.Errorf("the follower left %s in its directory", left[0].Name())
		}
	})
	return NewFollower(cfg, func() string { return addr }, func() bool { return leading })
}

func synth(n int, gen uint64) *replica.Replica {
	r := replicatest.Synth(n, nil)
	info := r.Info()
	info.Generation = gen
	return r.WithInfo(info)
}

func TestFollowerTakesTheLeadersState(t *testing.T) {
	l := startLeader(t, DefaultConfig())
	f := follower(t, DefaultConfig(), l.url, false)
	ctx := context.Background()

	r := synth(2000, 17)
	l.offer(t, r, 4242)
	got, snapshots, tag, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 3})
	if err != nil {
		t.Fatal(err)
	}
	if snapshots != 4242 || got.Len() != r.Len() || got.Info().Generation != 3 || !strings.HasPrefix(tag, `"`) {
		t.Fatalf("fetched %d listings, generation %d, %d snapshots, tag %s", got.Len(), got.Info().Generation, snapshots, tag)
	}
	for i, l := range r.All() {
		if !reflect.DeepEqual(got.All()[i], l) {
			t.Fatalf("listing %d differs", i)
		}
	}
	// The same state again: a 304, nothing to publish.
	again, _, tag2, err := f.Fetch(ctx, tag, replica.ReadOptions{Generation: 4, Prev: got})
	if err != nil || again != nil || tag2 != tag {
		t.Fatalf("same state: %v %v %q", again, err, tag2)
	}
	// The same replica offered again is not written again.
	n := l.pub.Written()
	l.pub.Offer(r, 4242)
	time.Sleep(50 * time.Millisecond)
	if l.pub.Written() != n {
		t.Error("the state written already was written again")
	}
	// A new state: fetched, sharing the text of the one it replaces.
	l.offer(t, synth(2000, 18), 4243)
	next, snapshots, tag3, err := f.Fetch(ctx, tag, replica.ReadOptions{Generation: 4, Prev: got})
	if err != nil || next == nil || tag3 == tag || snapshots != 4243 {
		t.Fatalf("new state: %v %d %q %q", err, snapshots, tag3, tag)
	}
	if !next.SharesText(got) {
		t.Error("the new state does not share the text of the one it replaces")
	}
	// A bare replica (no history yet) is not a state to hand out.
	bare := replica.New(nil, replica.NewInfo(time.Time{}, time.Now()))
	n = l.pub.Written()
	l.pub.Offer(bare, 0)
	time.Sleep(50 * time.Millisecond)
	if l.pub.Written() != n {
		t.Error("a replica without history was written")
	}
}

// TestFollowerFallsBack checks when a follower loads from ClickHouse
// itself (follow.ErrNoSource) and when it waits for the leader (an error
// the job retries).
func TestFollowerFallsBack(t *testing.T) {
	ctx := context.Background()
	quick := DefaultConfig()
	quick.Patience, quick.ElectionWait = 100*time.Millisecond, 100*time.Millisecond

	l := startLeader(t, DefaultConfig())
	if _, _, _, err := follower(t, quick, l.url, true).Fetch(ctx, "", replica.ReadOptions{Generation: 1}); !errors.Is(err, follow.ErrNoSource) {
		t.Errorf("an edge that leads: %v, want ErrNoSource", err)
	}

	// No leader named yet: wait for the election, then load.
	f := follower(t, quick, "", false)
	if _, _, _, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 1}); err == nil || errors.Is(err, follow.ErrNoSource) {
		t.Errorf("no leader yet: %v, want an error to retry", err)
	}
	time.Sleep(150 * time.Millisecond)
	if _, _, _, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 1}); !errors.Is(err, follow.ErrNoSource) {
		t.Errorf("no leader for longer than the election's wait: %v, want ErrNoSource", err)
	}

	// A leader still loading is waited for: an edge with a state keeps it
	// (an error to retry); one with none asks each second, up to Patience,
	// then loads itself.
	f = follower(t, quick, l.url, false)
	some := synth(10, 1)
	if _, _, _, err := f.Fetch(ctx, `"x"`, replica.ReadOptions{Generation: 1, Prev: some}); err == nil || errors.Is(err, follow.ErrNoSource) || !strings.Contains(err.Error(), "503") {
		t.Errorf("leader loading, this edge has a state: %v, want a 503 to retry", err)
	}
	time.Sleep(150 * time.Millisecond)
	if _, _, _, err := f.Fetch(ctx, `"x"`, replica.ReadOptions{Generation: 1, Prev: some}); err == nil || errors.Is(err, follow.ErrNoSource) {
		t.Errorf("leader loading past the patience, this edge has a state: %v, want an error to retry", err)
	}
	if _, _, _, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 1}); !errors.Is(err, follow.ErrNoSource) {
		t.Errorf("leader loading past the patience, this edge has none: %v, want ErrNoSource", err)
	}
	// An edge with no state gets the leader's first state as it comes.
	done := make(chan error, 1)
	go func() {
		r, _, _, err := follower(t, DefaultConfig(), l.url, false).Fetch(ctx, "", replica.ReadOptions{Generation: 1})
		if err == nil && r == nil {
			err = errors.New("no state")
		}
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	l.offer(t, synth(10, 1), 1)
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("waiting for the first state: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("an edge with no state did not get the leader's first state")
	}

	// A leader out of reach.
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	gone := "http://" + ln.Addr().String()
	ln.Close()
	if _, _, _, err := follower(t, quick, gone, false).Fetch(ctx, "", replica.ReadOptions{Generation: 1}); !errors.Is(err, follow.ErrNoSource) {
		t.Errorf("leader out of reach: %v, want ErrNoSource", err)
	}

	// An edge that stopped leading answers 503, not its old state.
	l.leading.Store(false)
	resp, err := http.Get(l.url + StatePath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("an edge no longer leading answers %d", resp.StatusCode)
	}
}

// TestFollowerRefusesADamagedState serves a state whose bytes do not
// match its ETag, and one that is not a snapshot.
func TestFollowerRefusesADamagedState(t *testing.T) {
	l := startLeader(t, DefaultConfig())
	l.offer(t, synth(300, 1), 1)
	good := l.pub.cur.Load()
	for _, c := range []struct {
		name string
		etag string
		body func([]byte) []byte
	}{
		{"a flipped byte", good.etag, func(b []byte) []byte { b[len(b)-100] ^= 1; return b }},
		{"another state's ETag", `"` + strings.Repeat("ab", 32) + `"`, func(b []byte) []byte { return b }},
		{"not a SHA-256", `W/"x"`, func(b []byte) []byte { return b }},
		{"not a snapshot", good.etag, func([]byte) []byte { return bytes.Repeat([]byte("x"), 1000) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				l.pub.ServeHTTP(rec, r)
				maps.Copy(w.Header(), rec.Header())
				w.Header().Del("Content-Length")
				w.Header().Set("ETag", c.etag)
				w.Write(c.body(rec.Body.Bytes()))
			}))
			defer srv.Close()
			r, _, _, err := follower(t, DefaultConfig(), srv.URL, false).Fetch(context.Background(), "", replica.ReadOptions{Generation: 1})
			if err == nil || r != nil {
				t.Fatalf("a damaged state was taken: %v", err)
			}
		})
	}
}

// TestLeaderSendsABoundedNumber holds the leader's sends and checks that
// one more is told to come back.
func TestLeaderSendsABoundedNumber(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Sends = 1
	l := startLeader(t, cfg)
	l.offer(t, synth(300, 1), 1)
	l.pub.sends <- struct{}{} // a send in progress
	resp, err := http.Get(l.url + StatePath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("past the bound: %d, want 503 with Retry-After", resp.StatusCode)
	}
	<-l.pub.sends
	for _, c := range []struct {
		method, path string
		want         int
	}{{"GET", StatePath, 200}, {"HEAD", StatePath, 200}, {"POST", StatePath, 405}, {"GET", "/other", 404}} {
		var resp *http.Response
		for try := 0; try < 100; try++ { // the send before may not have ended yet
			req, _ := http.NewRequest(c.method, l.url+c.path, nil)
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, r.Body)
			r.Body.Close()
			if resp = r; r.StatusCode != http.StatusServiceUnavailable {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		if resp.StatusCode != c.want {
			t.Errorf("%s %s: %d, want %d", c.method, c.path, resp.StatusCode, c.want)
		}
	}
}

// TestLeaderServesItsExports serves a day of exports and copies it as a
// follower's exports job does; files the manifest does not list are not
// served, whatever the path says.
func TestLeaderServesItsExports(t *testing.T) {
	l := startLeader(t, DefaultConfig())
	src := t.TempDir()
	body := []byte("the day's csv")
	sum := sha256.Sum256(body)
	m := exports.Manifest{Day: "2026-02-03", Files: []exports.File{{Name: "chrome.csv.gz", Store: "chrome", Format: "csv",
		Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}}}
	os.MkdirAll(filepath.Join(src, m.Day), 0o755)
	os.WriteFile(filepath.Join(src, m.Day, "chrome.csv.gz"), body, 0o644)
	os.WriteFile(filepath.Join(src, "secret"), []byte("not an export"), 0o644)
	l.pub.ServeExports(src, func() []exports.Manifest { return []exports.Manifest{m} })

	f := follower(t, DefaultConfig(), l.url, false)
	ctx := context.Background()
	days, err := f.Days(ctx)
	if err != nil || len(days) != 1 || days[0].Day != m.Day {
		t.Fatalf("days %+v, %v", days, err)
	}
	dst := t.TempDir()
	copied, err := exports.Copy(ctx, dst, days[0], func(ctx context.Context, name string) (io.ReadCloser, error) {
		return f.Open(ctx, days[0].Day, name)
	})
	if err != nil || !copied {
		t.Fatalf("copy: %v %v", copied, err)
	}
	if got, _ := os.ReadFile(filepath.Join(dst, m.Day, "chrome.csv.gz")); !bytes.Equal(got, body) {
		t.Errorf("copied %q", got)
	}
	for _, path := range []string{ExportsPath + "/2026-02-03/edge.csv.gz", ExportsPath + "/2026-02-03/../secret",
		ExportsPath + "/2026-02-03/%2e%2e%2fsecret", ExportsPath + "/../secret", ExportsPath + "/2026-02-04/chrome.csv.gz"} {
		resp, err := http.Get(l.url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || bytes.Contains(b, []byte("not an export")) {
			t.Errorf("%s: %d %q", path, resp.StatusCode, b)
		}
	}
	// A leader that builds no exports sends the follower to build its own.
	l2 := startLeader(t, DefaultConfig())
	if _, err := follower(t, DefaultConfig(), l2.url, false).Days(ctx); !errors.Is(err, follow.ErrNoSource) {
		t.Errorf("a leader without exports: %v, want ErrNoSource", err)
	}
}

// TestFollowerCutsALeaderThatStalls: a leader that sends part of its
// state and then nothing is given up after Idle, not waited for.
func TestFollowerCutsALeaderThatStalls(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("ETag", `"`+strings.Repeat("ab", 32)+`"`)
		w.Header().Set("Edge-Generation", "1")
		w.Header().Set("Content-Length", "100000")
		w.Write([]byte{0x28, 0xb5, 0x2f, 0xfd}) // the start of a zstd frame, then nothing
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release) // before the server's Close, which waits for the handler
	cfg := DefaultConfig()
	cfg.Idle = 200 * time.Millisecond
	done := make(chan error, 1)
	go func() {
		_, _, _, err := follower(t, cfg, srv.URL, false).Fetch(context.Background(), `"x"`, replica.ReadOptions{Generation: 1, Prev: synth(1, 1)})
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Fatal("a stalled state was taken")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follower waits on a leader that stalled")
	}
}

// TestLeaderCutsAnEdgeThatStopsReading: an edge that asks for the state
// and then reads nothing is cut after Idle, and its place among the
// sends at once is free again (the fourth review: the fleet server had
// no write timeout).
//
// Nothing here races the clock, so that a loaded machine (make test runs
// cmd/edge's process fault test beside it) cannot fail it. Each step waits on the
// publisher's own count of its sends, and the ask made while the edge
// holds the send is conclusive only when the edge is seen holding it and
// the ask answered within Idle of the edge's ask, before any cut can have
// come: a slower run (a loaded machine) runs again with Idle doubled, up
// to 9.6 s.
func TestLeaderCutsAnEdgeThatStopsReading(t *testing.T) {
	state := synth(10000, 1)
	for idle := 300 * time.Millisecond; ; idle *= 2 {
		if leaderCutsAnEdgeThatStopsReading(t, state, idle) {
			return
		}
		if idle > 5*time.Second {
			t.Fatalf("with Idle up to %v, the stalled ask was not seen holding the send, or the next ask not answered, within Idle of the stalled ask", idle)
		}
		t.Logf("the stalled ask was not seen holding the send, or the next ask not answered, within Idle (%v): again with Idle doubled", idle)
	}
}

// sendBuffer is the kernel's send buffer of the leader's connections in
// TestLeaderCutsAnEdgeThatStopsReading (Linux doubles it), so that a
// small state is more than the sockets hold.
const sendBuffer = 32 << 10

// smallSendBuffers gives each connection it accepts a send buffer of
// sendBuffer bytes, in place of the loopback's autotuned megabytes.
type smallSendBuffers struct{ net.Listener }

func (l smallSendBuffers) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(sendBuffer)
	}
	return c, err
}

// leaderCutsAnEdgeThatStopsReading is one run of
// TestLeaderCutsAnEdgeThatStopsReading with Idle idle; false when the
// ask made while the edge held the send was answered too late to tell.
func leaderCutsAnEdgeThatStopsReading(t *testing.T, state *replica.Replica, idle time.Duration) bool {
	t.Helper()
	cfg := DefaultConfig()
	cfg.Sends, cfg.Idle = 1, idle
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := startLeaderOn(t, cfg, smallSendBuffers{ln})
	l.offer(t, state, 1)
	// More than the sockets hold: the leader's send buffer and the
	// edge's receive buffer of 4 KiB, each doubled, many times over.
	if size := l.pub.cur.Load().size; size < 8*2*(sendBuffer+4096) {
		t.Fatalf("the state has %d bytes: too few to fill the sockets", size)
	}
	sending := func() int { return len(l.pub.sends) }
	c, err := net.Dial("tcp", strings.TrimPrefix(l.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.(*net.TCPConn).SetReadBuffer(4096)
	asked := time.Now() // the send, and its Idle, begin after this
	io.WriteString(c, "GET "+StatePath+" HTTP/1.1\r\nHost: x\r\n\r\n")
	// The edge's ask takes the one send at once: seen before its cut can
	// free it, or the run tells nothing.
	for sending() != 1 {
		if time.Since(asked) >= idle {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	// Held: the one send at once is taken.
	resp, err := http.Get(l.url + StatePath)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if time.Since(asked) >= idle && resp.StatusCode != http.StatusServiceUnavailable {
		return false // the edge may have been cut before this ask: it tells nothing
	}
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("while an edge holds the send: %s", resp.Status)
	}
	// Cut: the send is free again, and the next ask takes it. The bound
	// is on a cut that never comes (no write deadline), in Idles: the cut
	// itself comes one Idle after the send's last write began.
	within := 100 * idle
	for deadline := time.Now().Add(within); sending() != 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("an edge that stopped reading still holds the leader's send after %v (100 × Idle)", within)
		}
	}
	resp, err = http.Get(l.url + StatePath)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("once the edge that stopped reading was cut: %s", resp.Status)
	}
	return true
}
