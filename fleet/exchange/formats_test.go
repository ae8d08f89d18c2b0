package exchange

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/edge-stats/edge/internal/follow"
	"github.com/edge-stats/edge/views/replica"
)

// asFormat returns snapshot, a snapshot file, as one of format: its
// header's format version replaced, as a release of that format writes
// its header.
func asFormat(t *testing.T, snapshot []byte, format byte) []byte {
	t.Helper()
	zr, err := zstd.NewReader(bytes.NewReader(snapshot))
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	var raw bytes.Buffer
	if _, err := raw.ReadFrom(zr); err != nil {
		t.Fatal(err)
	}
	b := raw.Bytes()
	b[len("EDGESNAP")] = format
	var out bytes.Buffer
	zw, _ := zstd.NewWriter(&out, zstd.WithEncoderCRC(true))
	zw.Write(b)
	zw.Close()
	return out.Bytes()
}

// oldLeader serves states as a leader of another release does: no
// format named, 304 to its ETag.
type oldLeader struct {
	mu     sync.Mutex
	state  []byte
	gen    int
	wholes atomic.Int64 // whole states sent
	accept atomic.Value // the last ask's Accept
}

func (o *oldLeader) set(state []byte, gen int) {
	o.mu.Lock()
	o.state, o.gen = state, gen
	o.mu.Unlock()
}

func (o *oldLeader) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	state, gen := o.state, o.gen
	o.mu.Unlock()
	o.accept.Store(r.Header.Get("Accept"))
	sum := sha256.Sum256(state)
	etag := `"` + hex.EncodeToString(sum[:]) + `"`
	w.Header().Set("ETag", etag)
	w.Header().Set("Edge-Generation", strconv.Itoa(gen))
	if r.Header.Get("If-None-Match") == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	o.wholes.Add(1)
	w.Write(state)
}

// A follower given a state of a format it does not read loads from
// ClickHouse at once (follow.ErrNoSource), says why in its log and
// metrics, and does not take that state again; once the leader serves
// one it reads, it takes it.
func TestFollowerOfAnotherFormatLoadsFromClickHouse(t *testing.T) {
	var snap bytes.Buffer
	if _, err := replica.WriteSnapshot(&snap, synth(500, 7), 1); err != nil {
		t.Fatal(err)
	}
	old := &oldLeader{}
	old.set(asFormat(t, snap.Bytes(), replica.SnapshotFormat-1), 7)
	srv := httptest.NewServer(old)
	t.Cleanup(srv.Close)
	var log lockedLog
	cfg := DefaultConfig()
	cfg.Metrics = NewMetrics()
	cfg.Log = slog.New(slog.NewTextHandler(&log, nil))
	f := follower(t, cfg, srv.URL, false)
	ctx := context.Background()
	for i := range 5 {
		if _, _, _, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 1}); !errors.Is(err, follow.ErrNoSource) {
			t.Fatalf("ask %d: %v, want follow.ErrNoSource (load from ClickHouse)", i, err)
		}
	}
	if n := old.wholes.Load(); n != 1 {
		t.Errorf("the state of another format was sent %d times, want once", n)
	}
	if n := cfg.Metrics.Refused("format"); n != 1 {
		t.Errorf("refused for its format %v times, want once", n)
	}
	if s := log.String(); strings.Count(s, "format this edge does not read") != 1 || !strings.Contains(s, "format 2") {
		t.Errorf("the follower did not say why once:\n%s", s)
	}
	if a, _ := old.accept.Load().(string); a != "application/vnd.edge.state; v=3" {
		t.Errorf("the follower asked with Accept %q", a)
	}
	// The leader's next state is of a format it reads: taken.
	old.set(snap.Bytes(), 8)
	got, _, _, err := f.Fetch(ctx, "", replica.ReadOptions{Generation: 2})
	if err != nil || got == nil || got.Len() != 500 {
		t.Fatalf("a state of its format after one of another: %v", err)
	}
}

// The leader answers in a format the follower names, a follower that
// names none in format 3 (the release before), and 406 when it writes
// none the follower reads; such a follower loads from ClickHouse at once.
func TestLeaderAnswersInAFormatTheFollowerReads(t *testing.T) {
	l := startLeader(t, DefaultConfig())
	l.offer(t, synth(300, 1), 1)
	for _, c := range []struct {
		accept string
		status int
	}{
		{"", http.StatusOK},
		{"*/*", http.StatusOK},
		{"application/vnd.edge.state; v=3", http.StatusOK},
		{"application/vnd.edge.state; v=4, application/vnd.edge.state; v=3", http.StatusOK},
		{"application/vnd.edge.state; v=4, v=3", http.StatusOK},
		{"application/vnd.edge.state; v=2", http.StatusNotAcceptable},
		{"application/vnd.edge.state; v=4", http.StatusNotAcceptable},
	} {
		var h []string
		if c.accept != "" {
			h = []string{"Accept", c.accept}
		}
		resp := askState(t, l.url, http.MethodGet, h...)
		if resp.StatusCode != c.status {
			t.Errorf("Accept %q: %s, want %d", c.accept, resp.Status, c.status)
			continue
		}
		if c.status == http.StatusOK && resp.Header.Get(FormatHeader) != "3" {
			t.Errorf("Accept %q: format %q, want 3", c.accept, resp.Header.Get(FormatHeader))
		}
		if c.status == http.StatusNotAcceptable && resp.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("Accept %q: a 406 of %q", c.accept, resp.Header.Get("Content-Type"))
		}
	}
	// A follower answered 406 loads from ClickHouse at once.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Accept") != acceptHeader(replica.Formats) {
			t.Errorf("the follower asked with Accept %q", r.Header.Get("Accept"))
		}
		problem(w, http.StatusNotAcceptable, "No state in a format the edge reads", "…", 0)
	}))
	t.Cleanup(srv.Close)
	cfg := DefaultConfig()
	cfg.Metrics = NewMetrics()
	f := follower(t, cfg, srv.URL, false)
	if _, _, _, err := f.Fetch(context.Background(), "", replica.ReadOptions{}); !errors.Is(err, follow.ErrNoSource) || cfg.Metrics.Refused("format") != 1 {
		t.Fatalf("a 406: %v (refused %v), want follow.ErrNoSource at once", err, cfg.Metrics.Refused("format"))
	}
}
