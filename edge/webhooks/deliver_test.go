package webhooks

import (
	"context"
	"encoding/base64"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/served"
)

// countHandler counts the records logged at each level.
type countHandler struct{ warn, info atomic.Int64 }

func (h *countHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *countHandler) Handle(_ context.Context, r slog.Record) error {
	switch {
	case r.Level >= slog.LevelWarn:
		h.warn.Add(1)
	case r.Level >= slog.LevelInfo:
		h.info.Add(1)
	}
	return nil
}
func (h *countHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *countHandler) WithGroup(string) slog.Handler      { return h }

// TestEndpointsOutOfReachLogOnce: while ClickHouse is out of reach, the
// delivering edge reads its endpoints again once a second, not at every
// tick (ten a second), and logs the first failure only (a new user saw
// 546 warnings in a minute).
func TestEndpointsOutOfReachLogOnce(t *testing.T) {
	h := &countHandler{}
	db := analytics.NewLazy(analytics.Config{Addr: "127.0.0.1:1", DialTimeout: 50 * time.Millisecond})
	d, err := NewDeliverer(Config{Key: base64.StdEncoding.EncodeToString(make([]byte, 32))}, db,
		&views.Published[served.State]{}, Lead{}, slog.New(h))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	defer cancel()
	d.Run(ctx)
	if w := h.warn.Load(); w != 1 {
		t.Fatalf("%d warnings in 2.5 s of ClickHouse out of reach, want 1", w)
	}
}
