package cron

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// TestExportsWaitForTheFigures: the exports job builds nothing (it does
// not even ask ClickHouse) until what it waits on (the builder's
// WaitFigures) says the figures are there.
func TestExportsWaitForTheFigures(t *testing.T) {
	e := NewExports(ExportsConfig{Dir: t.TempDir(), Keep: 1, PerRun: 1}, nil, slog.New(slog.DiscardHandler))
	waited := false
	e.WaitFor(func(ctx context.Context) error {
		waited = true
		<-ctx.Done() // no figures yet
		return ctx.Err()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// db is nil: a run that went past the wait would panic on it.
	if err := e.run(ctx); !errors.Is(err, context.DeadlineExceeded) || !waited {
		t.Fatalf("a run before the figures: %v (waited %v), want it to wait until its context ends", err, waited)
	}
}
