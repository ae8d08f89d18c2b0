package relay

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"time"
)

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
