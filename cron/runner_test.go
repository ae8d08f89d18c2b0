package cron

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func quiet() *slog.Logger { return slog.New(slog.DiscardHandler) }

func fastBackoff() Backoff { return Backoff{Initial: time.Millisecond, Max: 4 * time.Millisecond} }

func TestRetriesUntilSuccess(t *testing.T) {
	r := New(context.Background(), quiet(), fastBackoff())
	var calls atomic.Int32
	err := r.Add(Job{Name: "flaky", Schedule: "@every 1h", Run: func(ctx context.Context) error {
		if calls.Add(1) < 4 {
			return errors.New("clickhouse unreachable")
		}
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		if err := r.RunNow("flaky"); err == nil {
			t.Fatalf("attempt %d succeeded", i)
		}
	}
	r.Start() // retries with backoff until the job succeeds
	deadline := time.Now().Add(10 * time.Second)
	for r.Status()[0].Runs == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	r.Stop()
	st := r.Status()[0]
	if calls.Load() != 4 || st.Runs != 1 || st.Failures != 3 || st.LastError != "clickhouse unreachable" ||
		st.LastSuccess.IsZero() || st.Running {
		t.Fatalf("calls %d, status %+v", calls.Load(), st)
	}
}

func TestPanicIsAFailure(t *testing.T) {
	r := New(context.Background(), quiet(), fastBackoff())
	var calls atomic.Int32
	r.Add(Job{Name: "boom", Schedule: "@every 1h", Run: func(ctx context.Context) error {
		if calls.Add(1) == 1 {
			panic("nil map")
		}
		return nil
	}})
	if err := r.RunNow("boom"); err == nil || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("panicking run returned %v", err)
	}
	if err := r.RunNow("boom"); err != nil {
		t.Fatal(err)
	}
	st := r.Status()[0]
	if st.Failures != 1 || !strings.Contains(st.LastError, "panicked") || st.Runs != 1 {
		t.Fatalf("status %+v", st)
	}
}

func TestStartRunsAtOnceAndStopCancels(t *testing.T) {
	r := New(context.Background(), quiet(), fastBackoff())
	started := make(chan struct{})
	var cancelled atomic.Bool
	r.Add(Job{Name: "long", Schedule: "@every 1h", Run: func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		cancelled.Store(true)
		return ctx.Err()
	}})
	r.Start()
	<-started // ran at start, not at the first tick an hour away
	if !r.Status()[0].Running {
		t.Error("status does not show the job running")
	}
	r.Stop()
	if !cancelled.Load() {
		t.Fatal("Stop did not cancel the running job")
	}
	if st := r.Status()[0]; st.Runs != 0 || st.Running {
		t.Fatalf("status after stop %+v", st)
	}
}

func TestAddRejects(t *testing.T) {
	r := New(context.Background(), quiet(), fastBackoff())
	ok := Job{Name: "a", Schedule: "*/5 * * * *", Run: func(context.Context) error { return nil }}
	if err := r.Add(ok); err != nil {
		t.Fatal(err)
	}
	if err := r.Add(ok); err == nil {
		t.Error("duplicate name accepted")
	}
	if err := r.Add(Job{Name: "b", Schedule: "every tuesday", Run: ok.Run}); err == nil {
		t.Error("bad schedule accepted")
	}
	if err := r.RunNow("missing"); err == nil {
		t.Error("RunNow of an unknown job succeeded")
	}
}

// TestOnlyIfSkips: a job whose OnlyIf says no is skipped, counted, and
// not run; once it says yes, the job runs.
func TestOnlyIfSkips(t *testing.T) {
	r := New(context.Background(), quiet(), fastBackoff())
	var (
		calls   atomic.Int32
		leading atomic.Bool
	)
	err := r.Add(Job{Name: "ranks", Schedule: "@every 1h", OnlyIf: leading.Load, Run: func(context.Context) error {
		calls.Add(1)
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := r.RunNow("ranks"); err != nil {
			t.Fatal(err)
		}
	}
	if st := r.Status()[0]; calls.Load() != 0 || st.Skipped != 2 || st.Runs != 0 {
		t.Fatalf("another edge leads: %d calls, status %+v", calls.Load(), st)
	}
	leading.Store(true)
	if err := r.RunNow("ranks"); err != nil {
		t.Fatal(err)
	}
	if st := r.Status()[0]; calls.Load() != 1 || st.Skipped != 2 || st.Runs != 1 {
		t.Fatalf("leading: %d calls, status %+v", calls.Load(), st)
	}
}

// TestRunNowOfNoSuchJob: a job this runner lacks (its schedule off on
// this edge) is ErrNoJob, which callers tell from a job's failure
// without reading its text.
func TestRunNowOfNoSuchJob(t *testing.T) {
	r := New(context.Background(), quiet(), fastBackoff())
	if err := r.Add(Job{Name: "fails", Schedule: "@every 1h", Run: func(context.Context) error { return errors.New("broken") }}); err != nil {
		t.Fatal(err)
	}
	if err := r.RunNow("editions"); !errors.Is(err, ErrNoJob) || !strings.Contains(err.Error(), "editions") {
		t.Errorf("a job it lacks: %v, want ErrNoJob naming it", err)
	}
	if err := r.RunNow("fails"); err == nil || errors.Is(err, ErrNoJob) {
		t.Errorf("a job that fails: %v, want its own error", err)
	}
}

// TestRunOnLead: a new leader runs the jobs marked OnLead at once, each
// once, and no other; a failure names its job and does not stop the
// others; a job skipped by OnlyIf is counted as skipped.
func TestRunOnLead(t *testing.T) {
	r := New(context.Background(), quiet(), fastBackoff())
	var ran sync.Map
	job := func(name string, onLead bool, err error, onlyIf func() bool) Job {
		return Job{Name: name, Schedule: "@every 1h", OnLead: onLead, OnlyIf: onlyIf, Run: func(context.Context) error {
			n, _ := ran.LoadOrStore(name, new(atomic.Int32))
			n.(*atomic.Int32).Add(1)
			return err
		}}
	}
	for _, j := range []Job{job("ranks", true, nil, nil), job("refresh", false, nil, nil), job("editions", true, errors.New("broken"), nil),
		job("retention", true, nil, func() bool { return false })} {
		if err := r.Add(j); err != nil {
			t.Fatal(err)
		}
	}
	errs := r.RunOnLead()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "editions") || !strings.Contains(errs[0].Error(), "broken") {
		t.Errorf("errors %v, want the editions' alone, naming it", errs)
	}
	for name, want := range map[string]int32{"ranks": 1, "editions": 1, "refresh": 0, "retention": 0} {
		var got int32
		if n, ok := ran.Load(name); ok {
			got = n.(*atomic.Int32).Load()
		}
		if got != want {
			t.Errorf("%s ran %d times, want %d", name, got, want)
		}
	}
	for _, s := range r.Status() {
		if s.Name == "retention" && s.Skipped != 1 {
			t.Errorf("retention (not this edge's to run): skipped %d, want 1", s.Skipped)
		}
	}
}
