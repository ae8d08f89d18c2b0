package builder

import (
	"context"
	"log/slog"
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

// TestWaitFigures: a job waiting on the first figures (the editions after
// a restart) waits until a state with figures is published, and no
// longer than its context.
func TestWaitFigures(t *testing.T) {
	v := New(nil, &views.Published[served.State]{}, slog.New(slog.DiscardHandler))
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

// TestStateHandedOutBeforeItsFigures: a fleet's publisher (OnPublish) is
// given a state before its figures are built and published, so that the
// followers build theirs beside the leader's.
func TestStateHandedOutBeforeItsFigures(t *testing.T) {
	pub := &views.Published[served.State]{}
	v := New(nil, pub, slog.New(slog.DiscardHandler))
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
