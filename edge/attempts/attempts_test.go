package attempts

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// taken collects what a log hands over.
type taken struct {
	mu  sync.Mutex
	got []Attempt
}

func (t *taken) apply(a Attempt) {
	t.mu.Lock()
	t.got = append(t.got, a)
	t.mu.Unlock()
}

func (t *taken) count(k Kind, key Key) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, a := range t.got {
		if a.Kind == k && a.Key == key {
			n++
		}
	}
	return n
}

func newLog(store Store) (*Log, *taken) {
	var tk taken
	return New(store, time.Hour, tk.apply, slog.New(slog.DiscardHandler)), &tk
}

// An edge's attempts reach every other edge at their next sync, once
// each, and never come back to the edge that made them; an edge started
// later reads what the log holds of the window, its own earlier runs'
// included.
func TestAttemptsReachTheFleetOnce(t *testing.T) {
	ctx := context.Background()
	store := Memory()
	a, fromA := newLog(store)
	b, fromB := newLog(store)
	for _, l := range []*Log{a, b} {
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	key := Subject("signup", "203.0.113.7")
	happened := time.Now().Add(-time.Minute)
	a.Record(SignUp, key, happened)
	a.Record(SignUp, key, happened)
	b.Record(SignInEmail, Subject("email", "x@example.com"), happened)
	for range 3 { // syncs again read the overlap: nothing twice
		for _, l := range []*Log{a, b} {
			if err := l.Sync(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := fromB.count(SignUp, key); n != 2 {
		t.Errorf("the other edge took %d of the 2 sign-ups", n)
	}
	if n := fromA.count(SignUp, key); n != 0 {
		t.Errorf("the edge took back %d of its own sign-ups", n)
	}
	if n := fromA.count(SignInEmail, Subject("email", "x@example.com")); n != 1 {
		t.Errorf("took %d of the other's failed sign-ins, want 1", n)
	}
	fromB.mu.Lock()
	if got := fromB.got[0].Happened; !got.Equal(happened.Truncate(time.Millisecond)) {
		t.Errorf("happened %v, want %v: counted from when it happened", got, happened)
	}
	fromB.mu.Unlock()
	// A restart: a new log of the same store reads the window whole.
	c, fromC := newLog(store)
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if fromC.count(SignUp, key) != 2 || fromC.count(SignInEmail, Subject("email", "x@example.com")) != 1 {
		t.Errorf("a restarted edge took %d sign-ups and %d failures, want 2 and 1", fromC.count(SignUp, key), fromC.count(SignInEmail, Subject("email", "x@example.com")))
	}
}

// A log whose store is away is not current (sign-ups are refused while
// it is not), keeps what it recorded, and writes it once the store is
// back.
func TestAStoreAwayKeepsTheAttempts(t *testing.T) {
	ctx := context.Background()
	store := Memory()
	a, _ := newLog(store)
	b, fromB := newLog(store)
	clock := time.Now()
	a.now = func() time.Time { return clock }
	if ok, _ := a.Current(); ok {
		t.Error("a log that never synced is current")
	}
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	a.every.Store(int64(2 * time.Second))
	if ok, _ := a.Current(); !ok {
		t.Fatal("a log just synced is not current")
	}
	store.Fail.Store(true)
	key := Subject("addr", "198.51.100.1")
	a.Record(SignInAddr, key, clock)
	if err := a.Sync(ctx); err == nil {
		t.Fatal("a sync with the store away succeeded")
	}
	clock = clock.Add(7 * time.Second)
	if ok, wait := a.Current(); ok || wait < time.Second {
		t.Errorf("three intervals without a sync: current %v, wait %v", ok, wait)
	}
	store.Fail.Store(false)
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, _ := a.Current(); !ok {
		t.Error("current not again after a sync")
	}
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if fromB.count(SignInAddr, key) != 1 {
		t.Error("the attempt recorded while the store was away was lost")
	}
}

// Subjects are hashed with their parts length-prefixed: moving a
// boundary between parts gives another key.
func TestSubject(t *testing.T) {
	if Subject("pair", "ab", "c") == Subject("pair", "a", "bc") || Subject("email", "x") == Subject("addr", "x") {
		t.Error("two lists of parts share a key")
	}
	if Subject("email", "x") != Subject("email", "x") {
		t.Error("a subject's key is not stable")
	}
}

// A quiet log: no new batch for minutes, every sync reads the last
// batches again (the overlap): each is still taken once.
func TestAQuietLogCountsOnce(t *testing.T) {
	ctx := context.Background()
	store := Memory()
	a, _ := newLog(store)
	b, fromB := newLog(store)
	clock := time.Now()
	b.now = func() time.Time { return clock }
	for _, l := range []*Log{a, b} {
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
	}
	key := Subject("pair", "x@example.com", "192.0.2.1")
	a.Record(SignInPair, key, time.Now())
	if err := a.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := b.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		clock = clock.Add(time.Minute)
	}
	if n := fromB.count(SignInPair, key); n != 1 {
		t.Errorf("a batch read again by ten syncs over ten minutes was taken %d times", n)
	}
}

// A Record is never held by a Sync's write or read.
func TestRecordDoesNotWaitForASync(t *testing.T) {
	slow := &slowStore{Store: Memory(), release: make(chan struct{}), entered: make(chan struct{})}
	l, _ := newLog(slow)
	l.Record(SignUp, Subject("signup", "192.0.2.2"), time.Now())
	done := make(chan error, 1)
	go func() { done <- l.Sync(context.Background()) }()
	<-slow.entered // the Sync is in its write
	recorded := make(chan struct{})
	go func() {
		l.Record(SignUp, Subject("signup", "192.0.2.3"), time.Now())
		close(recorded)
	}()
	select {
	case <-recorded:
	case <-time.After(10 * time.Second):
		t.Fatal("a Record waited for the Sync's write")
	}
	close(slow.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// slowStore holds its first Write until released.
type slowStore struct {
	Store
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowStore) Write(ctx context.Context, a []analytics.Attempt) error {
	s.once.Do(func() {
		close(s.entered)
		<-s.release
	})
	return s.Store.Write(ctx, a)
}
