package cron

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// TestWaitFigures: a job waiting on the first figures (the editions after
// a restart) waits until a state with figures is published, and no
// longer than its context.
func TestWaitFigures(t *testing.T) {
	v := NewViews(nil, &views.Published[served.State]{}, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := v.WaitFigures(ctx); err == nil {
		t.Fatal("WaitFigures returned before any figures")
	}
	done := make(chan error, 1)
	go func() { done <- v.WaitFigures(context.Background()) }()
	if err := v.publish(replica.New(nil, replica.Info{}), nil, 0, "test", nil); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := v.WaitFigures(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestExportsWaitForTheFigures: the exports job builds nothing (it does
// not even ask ClickHouse) until the figures it waits on are there.
func TestExportsWaitForTheFigures(t *testing.T) {
	v := NewViews(nil, &views.Published[served.State]{}, slog.New(slog.DiscardHandler))
	e := NewExports(ExportsConfig{Dir: t.TempDir(), Keep: 1, PerRun: 1}, nil, slog.New(slog.DiscardHandler))
	e.WaitFor(v.WaitFigures)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	// db is nil: a run that went past the wait would panic on it.
	if err := e.run(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a run before the figures: %v, want it to wait until its context ends", err)
	}
}

// TestStateHandedOutBeforeItsFigures: a fleet's publisher (OnPublish) is
// given a state before its figures are built and published, so that the
// followers build theirs beside the leader's.
func TestStateHandedOutBeforeItsFigures(t *testing.T) {
	pub := &views.Published[served.State]{}
	v := NewViews(nil, pub, slog.New(slog.DiscardHandler))
	r := replica.New(nil, replica.Info{Generation: 7})
	var given *replica.Replica
	var publishedThen *served.State
	v.OnPublish(func(got *replica.Replica, _ int64) { given, publishedThen = got, pub.Load() })
	if err := v.publish(r, nil, 0, "test", nil); err != nil {
		t.Fatal(err)
	}
	if given != r || publishedThen != nil {
		t.Fatalf("handed out %v, with %v published then; want the state, before it", given, publishedThen)
	}
	if st := pub.Load(); st == nil || st.Replica != r || st.Figures == nil {
		t.Fatal("the state was not published with its figures")
	}
}
