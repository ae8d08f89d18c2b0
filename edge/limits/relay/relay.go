// Package relay lets the edges of a fleet read what the fleet's usage
// log and key list changed from the edge that leads, instead of each
// asking ClickHouse every few seconds (issue 40: what is left per edge
// once the state is built once per fleet is these polls).
//
// The leading edge reads the usage log as a lone edge does; a Recorder
// around its store keeps what each read brought for two minutes and
// serves it (UsagePath). A following edge's Store asks the leader first
// and reads ClickHouse itself when the leader cannot answer (none, out of
// reach, or its record does not reach back to the position asked): the
// rows it gets are those a read of its own would get, so its totals are
// the same. Each edge still writes its own calls to ClickHouse.
//
// For the keys, the leader serves a version that changes whenever its
// key list changed (KeysPath), and a following edge reloads its keys only
// when the version moved, or every few minutes regardless (KeysGate).
package relay

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/limits"
)

// The paths the leader serves.
const (
	UsagePath = "/fleet/v1/usage"
	KeysPath  = "/fleet/v1/keys"
)

// keepFor is how long a Recorder keeps what a read brought: long enough
// for a follower that missed a few syncs to catch up from it.
const keepFor = 2 * time.Minute

// maxWindows bounds the reads a Recorder keeps.
const maxWindows = 1024

// maxReach is how long before the position asked the read that holds it
// may have started: the leader's sync interval and then some. Past it
// the answer could hold batches the asker applied longer ago than it
// remembers (limits: three log overlaps, 12 s).
const maxReach = 4 * time.Second

type window struct {
	day      time.Time
	from, to limits.Pos
	changes  []analytics.UsageChange
	at       time.Time
}

// Recorder is a limits.Store that keeps what its reads of the log
// (Since) brought, for the fleet's other edges (ServeHTTP).
type Recorder struct {
	limits.Store
	mu      sync.Mutex
	windows []window
	now     func() time.Time
}

// NewRecorder returns a recorder around base.
func NewRecorder(base limits.Store) *Recorder {
	return &Recorder{Store: base, now: time.Now}
}

func dayKey(t time.Time) time.Time { return t.UTC().Truncate(24 * time.Hour) }

// Day reads the day from the store; the reads recorded before it no
// longer join the reads after it, so they are dropped.
func (r *Recorder) Day(ctx context.Context, day time.Time) (limits.DayRead, error) {
	read, err := r.Store.Day(ctx, day)
	if err == nil {
		r.mu.Lock()
		r.windows = nil
		r.mu.Unlock()
	}
	return read, err
}

// Since reads the log from the store, and records what it brought.
func (r *Recorder) Since(ctx context.Context, day time.Time, pos limits.Pos) ([]analytics.UsageChange, limits.Pos, error) {
	changes, next, err := r.Store.Since(ctx, day, pos)
	if err != nil {
		return changes, next, err
	}
	now := r.now()
	r.mu.Lock()
	defer r.mu.Unlock()
	drop := 0
	for drop < len(r.windows) && (now.Sub(r.windows[drop].at) > keepFor || len(r.windows)-drop >= maxWindows) {
		drop++
	}
	r.windows = append(r.windows[drop:], window{day: dayKey(day), from: pos, to: next, changes: changes, at: now})
	return changes, next, nil
}

// answer returns what the recorded reads hold of day from pos on, and
// the position to ask from next; ok is false when they do not reach back
// to pos (without a gap), so that the asker reads the store itself.
func (r *Recorder) answer(day time.Time, pos limits.Pos) (changes []analytics.UsageChange, next limits.Pos, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	day = dayKey(day)
	start := -1
	for i, w := range r.windows {
		if w.day.Equal(day) && !w.from.After(pos) {
			start = i // the last read that starts at or before pos
		}
	}
	if start < 0 {
		return nil, pos, false
	}
	// The rows of the read that holds pos go back to its start: a reader
	// remembers the batches it applied for a few seconds only, so a read
	// that started long before pos (the leader's syncs stalled) could
	// bring batches it applied long ago, to be counted twice. The store
	// answers then.
	if at, _ := pos.Parts(); !at.IsZero() {
		if from, _ := r.windows[start].from.Parts(); at.Sub(from) > maxReach {
			return nil, pos, false
		}
	}
	next = pos
	for i := start; i < len(r.windows); i++ {
		w := r.windows[i]
		if !w.day.Equal(day) || (i > start && w.from.After(r.windows[i-1].to)) {
			return nil, pos, false // a gap: another day's, or a read that failed in between
		}
		changes = append(changes, w.changes...)
		if w.to.After(next) {
			next = w.to
		}
	}
	return changes, next, true
}

// usageAnswer is the JSON of an answer to UsagePath.
type usageAnswer struct {
	At      int64    `json:"at"` // the next position's time, Unix nanoseconds (0: none)
	N       int      `json:"n"`  // and its index
	Changes []change `json:"changes"`
}

type change struct {
	Edge    string `json:"edge"`
	Seq     uint64 `json:"seq"`
	Subject string `json:"subject"`
	Calls   uint64 `json:"calls"`
}

func posJSON(p limits.Pos) (int64, int) {
	at, n := p.Parts()
	if at.IsZero() {
		return 0, n
	}
	return at.UnixNano(), n
}

func posOf(at int64, n int) limits.Pos {
	if at == 0 {
		return limits.PosOf(time.Time{}, n)
	}
	return limits.PosOf(time.Unix(0, at).UTC(), n)
}

// ServeHTTP answers GET UsagePath?day=YYYY-MM-DD&at=&n= with what the
// recorded reads hold from that position on (200), or 410 Gone when they
// do not reach back to it.
func (r *Recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	q := req.URL.Query()
	day, err := time.Parse(time.DateOnly, q.Get("day"))
	at, errAt := strconv.ParseInt(q.Get("at"), 10, 64)
	n, errN := strconv.Atoi(q.Get("n"))
	if err != nil || errAt != nil || errN != nil || n < 0 {
		http.Error(w, "want day=YYYY-MM-DD, at=<Unix nanoseconds> and n=<index>", http.StatusBadRequest)
		return
	}
	changes, next, ok := r.answer(day, posOf(at, n))
	if !ok {
		http.Error(w, "the leader's record does not reach back to that position: read the store", http.StatusGone)
		return
	}
	a := usageAnswer{Changes: make([]change, len(changes))}
	a.At, a.N = posJSON(next)
	for i, c := range changes {
		a.Changes[i] = change{Edge: c.Batch.Edge, Seq: c.Batch.Seq, Subject: c.Subject, Calls: c.Calls}
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(a)
}

// Client asks the fleet's leader.
type Client struct {
	// Leader returns the leader's fleet address, "" when this edge leads
	// or none is known: then every read goes to the store.
	Leader func() string
	// HTTP is the client to ask with (nil: one with a 2-second timeout):
	// in a fleet with a token, one whose transport proves this edge holds
	// it and requires the leader to prove the same (fleet.Transport).
	HTTP *http.Client
}

func (c *Client) get(ctx context.Context, path string, query url.Values, out any) (int, error) {
	addr := c.Leader()
	if addr == "" {
		return 0, fmt.Errorf("no leader")
	}
	u := addr + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, err
	}
	hc := c.HTTP
	if hc == nil {
		hc = defaultHTTP
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return resp.StatusCode, fmt.Errorf("leader answered %s", resp.Status)
	}
	return resp.StatusCode, json.NewDecoder(io.LimitReader(resp.Body, 64<<20)).Decode(out)
}

var defaultHTTP = &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{Proxy: nil, MaxIdleConnsPerHost: 4}}

// Store is a following edge's usage store: reads of the log ask the
// leader first, everything else goes to the store it wraps.
type Store struct {
	limits.Store
	c                 *Client
	relayed, directly atomic.Int64
}

// NewStore returns a store that reads the log through c's leader, and
// otherwise from base.
func NewStore(base limits.Store, c *Client) *Store { return &Store{Store: base, c: c} }

// Since asks the leader for what was added from pos on; when it cannot
// answer, it reads the store.
func (s *Store) Since(ctx context.Context, day time.Time, pos limits.Pos) ([]analytics.UsageChange, limits.Pos, error) {
	at, n := posJSON(pos)
	var a usageAnswer
	if _, err := s.c.get(ctx, UsagePath, url.Values{"day": {dayKey(day).Format(time.DateOnly)},
		"at": {strconv.FormatInt(at, 10)}, "n": {strconv.Itoa(n)}}, &a); err == nil {
		changes := make([]analytics.UsageChange, len(a.Changes))
		for i, c := range a.Changes {
			changes[i] = analytics.UsageChange{Batch: analytics.UsageBatch{Edge: c.Edge, Seq: c.Seq}, Subject: c.Subject, Calls: c.Calls}
		}
		s.relayed.Add(1)
		return changes, posOf(a.At, a.N), nil
	}
	s.directly.Add(1)
	return s.Store.Since(ctx, day, pos)
}

// Reads returns how many reads of the log the leader answered, and how
// many went to the store.
func (s *Store) Reads() (relayed, directly int64) { return s.relayed.Load(), s.directly.Load() }

// keysAnswer is the JSON of an answer to KeysPath.
type keysAnswer struct {
	Version string `json:"version"`
}

// KeysHandler answers GET KeysPath with version(), the leader's key list
// version.
func KeysHandler(version func() string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(keysAnswer{Version: version()})
	})
}

// KeysGate decides, on each tick of a following edge's key reloads,
// whether to reload: when the leader's key list version moved since the
// last reload, and at least every Every; when the leader cannot say, at
// the rhythm of an edge on its own (Fallback). A reload that fails is
// tried again at that rhythm, not at every tick.
type KeysGate struct {
	c        *Client
	every    time.Duration
	fallback time.Duration
	mu       sync.Mutex
	seen     string    // the version of the last reload that succeeded
	pending  string    // the version the reload under way is for
	tried    time.Time // when the last reload was asked for
	failed   bool      // the last reload asked for has not succeeded
	now      func() time.Time
}

// NewKeysGate returns the gate of a following edge's key reloads: a
// reload at least every every, and every fallback while the leader
// cannot say whether its list changed.
func NewKeysGate(c *Client, every, fallback time.Duration) *KeysGate {
	return &KeysGate{c: c, every: every, fallback: fallback, now: time.Now}
}

// Load reports whether the keys should be reloaded now.
func (g *KeysGate) Load(ctx context.Context) bool {
	var a keysAnswer
	_, err := g.c.get(ctx, KeysPath, nil, &a)
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	due := now.Sub(g.tried) >= g.fallback
	switch {
	case err != nil || a.Version == "": // nobody to ask
		if !due {
			return false
		}
	case a.Version != g.seen:
		if g.failed && !due {
			return false
		}
	case now.Sub(g.tried) < g.every:
		return false
	}
	g.pending, g.tried, g.failed = a.Version, now, true
	return true
}

// Loaded records that the reload Load asked for succeeded.
func (g *KeysGate) Loaded() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seen, g.failed = g.pending, false
}
