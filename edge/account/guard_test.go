package account

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/attempts"
)

// TestSignInGuardIsBounded: every counter of the sign-ins and sign-ups
// holds at most MaxAddresses keys (EDGE_LIMITS_MAX_ADDRESSES), however
// many clients and addresses are tried.
func TestSignInGuardIsBounded(t *testing.T) {
	g := newSignInGuard(Config{SignInFailures: 5, SignInEmailFailures: 50, SignInWindow: 15 * time.Minute,
		SignUps: 5, MaxAddresses: 640}, nil)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	for i := range 20_000 {
		addr := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		g.Reserve(subjectsOf(fmt.Sprintf("user%d@example.com", i), addr), now)
		g.signUps.Allow(signUpKey(addr), now)
	}
	for name, n := range map[string]int{"pairs": g.byPair.Len(), "e-mails": g.byEmail.Len(),
		"addresses": g.byAddr.Len(), "sign-ups": g.signUps.Len()} {
		if n > 640 {
			t.Errorf("%s: %d keys held, bound 640", name, n)
		}
	}
}

// TestEmailCeilingSurvivesAFlood: guesses at one account from rotating
// addresses reach its ceiling; a flood of failed sign-ins at thousands
// of other addresses, from thousands of clients (which fills the
// e-mail counter), does not push the account's count out and restart
// its ceiling.
func TestEmailCeilingSurvivesAFlood(t *testing.T) {
	const ceiling = 50
	g := newSignInGuard(Config{SignInFailures: 5, SignInEmailFailures: ceiling, SignInWindow: 15 * time.Minute,
		SignUps: 5, MaxAddresses: 640}, nil)
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	client := func(i int) netip.Addr {
		return netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, byte(i >> 8), byte(i)})
	}
	const target = "owner@example.com"
	for i := range ceiling - 1 {
		if ok, _ := g.Reserve(subjectsOf(target, client(i)), now); !ok {
			t.Fatalf("guess %d refused before the ceiling", i)
		}
	}
	// The flood: 2,000 clients, 5 other addresses each, later.
	later := now.Add(time.Minute)
	for i := range 2000 {
		for k := range 5 {
			g.Reserve(subjectsOf(fmt.Sprintf("flood%d-%d@example.com", i, k), client(10_000+i)), later)
		}
	}
	if ok, _ := g.Reserve(subjectsOf(target, client(5000)), later); !ok {
		t.Fatal("the last guess under the ceiling was refused")
	}
	for i := range 20 {
		if ok, _ := g.Reserve(subjectsOf(target, client(6000+i)), later); ok {
			t.Fatalf("guess %d past the ceiling admitted: the flood restarted the account's count", ceiling+i)
		}
	}
}

// slowStore is an attempts store whose every call takes delay, as a
// ClickHouse on a loaded machine does (or fails when its context ends
// first).
type slowStore struct {
	*attempts.MemoryStore
	delay time.Duration
}

func (s slowStore) wait(ctx context.Context) error {
	select {
	case <-time.After(s.delay):
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s slowStore) Write(ctx context.Context, a []analytics.Attempt) error {
	if err := s.wait(ctx); err != nil {
		return err
	}
	return s.MemoryStore.Write(ctx, a)
}

func (s slowStore) Of(ctx context.Context, subject string, kinds []uint8, since time.Time) ([]analytics.Attempt, error) {
	if err := s.wait(ctx); err != nil {
		return nil, err
	}
	return s.MemoryStore.Of(ctx, subject, kinds, since)
}

// TestSignUpWaitsCountWaitForTheFleetsCount: a sign-up's decision on the
// fleet's attempts log (two reads and a write, 400 ms each here) is
// refused for now (503) past Config.CountWait (EDGE_COUNT_WAIT), a
// second by default, and admitted when the count wait is longer than
// the decision (a burst's decisions, one at a time, on a loaded
// machine's ClickHouse).
func TestSignUpWaitsCountWaitForTheFleetsCount(t *testing.T) {
	for _, c := range []struct {
		name string
		wait time.Duration
		want int
	}{
		{"default", 0, http.StatusServiceUnavailable},
		{"longer than the decision", 5 * time.Second, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := newSignInGuard(Config{SignInFailures: 5, SignInEmailFailures: 50, SignInWindow: 15 * time.Minute, SignUps: 5,
				Shared: slowStore{attempts.Memory(), 400 * time.Millisecond}, CountWait: c.wait}, slog.New(slog.DiscardHandler))
			status, retry := g.SignUp(context.Background(), signUpKey(netip.MustParseAddr("192.0.2.1")), time.Now())
			if status != c.want || (status != 0 && retry <= 0) {
				t.Errorf("count wait %v: status %d, retry in %v; want %d", c.wait, status, retry, c.want)
			}
		})
	}
}
