package edge_test

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/attempts"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/edgetest"
)

// awayStore is a store of attempts that fails while away is set: the
// attempts log out of reach (a shard of a cluster down) while the rest
// of ClickHouse answers.
type awayStore struct {
	attempts.Store
	away atomic.Bool
}

var errAway = errors.New("the attempts log is out of reach")

func (s *awayStore) Write(ctx context.Context, a []analytics.Attempt) error {
	if s.away.Load() {
		return errAway
	}
	return s.Store.Write(ctx, a)
}

func (s *awayStore) Since(ctx context.Context, pos time.Time) ([]analytics.Attempt, time.Time, error) {
	if s.away.Load() {
		return nil, pos, errAway
	}
	return s.Store.Since(ctx, pos)
}

// TestAccountLimitsHoldAcrossTheFleet: two edges over one
// ClickHouse count each other's sign-ups and failed sign-ins through the
// attempts log, so that an address spreading its sign-ups, or guesses at
// one account, over both meets one limit, not one an edge; an edge
// started later counts what the log holds; and with the log out of reach
// an edge refuses sign-ups (503, Retry-After) rather than admit them
// unbounded, while its sign-ins keep its own ceiling, and what it counted
// meanwhile reaches the fleet once the log is back.
func TestAccountLimitsHoldAcrossTheFleet(t *testing.T) {
	d := chtestMigrated(t)
	store := &awayStore{Store: attempts.ClickHouse(analytics.NewLazy(*d.CH))}
	opts := func(c *edge.Config) {
		c.SignInFailures, c.SignInEmailFailures, c.SignUps = 3, 100, 2
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	}
	a := start(t, d, opts)
	b := edgetest.StartWith(t, d, nil, func(src *edge.Sources) { src.Attempts = store }, opts)
	from := func(addr string) map[string]string {
		return map[string]string{"X-Forwarded-For": addr, "Content-Type": "application/json"}
	}
	signUp := func(h *harness, addr, email string) answer {
		return call(t, "POST", h.Base+"/account", from(addr), `{"email":"`+email+`","password":"long enough password"}`)
	}
	signIn := func(h *harness, addr, email, pw string) answer {
		hdr := basic(email, pw)
		hdr["X-Forwarded-For"] = addr
		return call(t, "GET", h.Base+"/account/keys", hdr, "")
	}
	// fleet waits until h has counted n attempts of kind from the other
	// edges: a bound on waiting, not on speed.
	fleet := func(h *harness, kind string, n float64) {
		t.Helper()
		sample := `edge_account_attempts_total{from="fleet",kind="` + kind + `"}`
		deadline := time.Now().Add(time.Minute)
		for metricOf(t, h.Base, sample) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v, want %v", sample, metricOf(t, h.Base, sample), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	// Sign-ups: 2 an hour from an address, one on each edge; then both
	// refuse it, and another address is not touched.
	if s := signUp(a, "192.0.2.60", "first@example.com"); s.status != http.StatusCreated {
		t.Fatalf("first sign-up: %d %s", s.status, s.body)
	}
	fleet(b, "signUp", 1)
	if s := signUp(b, "192.0.2.60", "second@example.com"); s.status != http.StatusCreated {
		t.Fatalf("second sign-up, on the other edge: %d %s", s.status, s.body)
	}
	fleet(a, "signUp", 1)
	for name, h := range map[string]*harness{"a": a, "b": b} {
		if s := signUp(h, "192.0.2.60", "third-"+name+"@example.com"); s.status != http.StatusTooManyRequests || s.header.Get("Retry-After") == "" {
			t.Errorf("edge %s admitted a third sign-up of the address: %d %s", name, s.status, s.body)
		}
	}
	if s := signUp(b, "192.0.2.61", "other@example.com"); s.status != http.StatusCreated {
		t.Errorf("another address: %d %s", s.status, s.body)
	}

	// Failed sign-ins at one account from one address: 3 in the window,
	// two on a and one on b; then both refuse even the right password.
	const pw = "long enough password"
	for i, h := range []*harness{a, a, b} {
		if s := signIn(h, "192.0.2.70", "first@example.com", "wrong password"); s.status != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d %s", i+1, s.status, s.body)
		}
	}
	fleet(a, "signInPair", 1)
	fleet(b, "signInPair", 2)
	for name, h := range map[string]*harness{"a": a, "b": b} {
		if s := signIn(h, "192.0.2.70", "first@example.com", pw); s.status != http.StatusTooManyRequests {
			t.Errorf("edge %s: a sign-in past the fleet's 3 failures: %d", name, s.status)
		}
	}
	if s := signIn(b, "192.0.2.71", "first@example.com", pw); s.status != http.StatusOK {
		t.Errorf("the owner from another address: %d %s", s.status, s.body)
	}

	// A restart forgets nothing: an edge started now counts the log.
	c := start(t, d, opts)
	if s := signUp(c, "192.0.2.60", "after-restart@example.com"); s.status != http.StatusTooManyRequests {
		t.Errorf("an edge started after the sign-ups admitted another: %d %s", s.status, s.body)
	}
	if s := signIn(c, "192.0.2.70", "first@example.com", pw); s.status != http.StatusTooManyRequests {
		t.Errorf("an edge started after the failures let the address try again: %d", s.status)
	}

	// The log away from b: its sign-ups are refused with Retry-After
	// once its count is stale; its sign-ins keep b's own ceiling.
	store.away.Store(true)
	deadline := time.Now().Add(time.Minute)
	for metricOf(t, b.Base, "edge_account_attempts_current") != 0 {
		if time.Now().After(deadline) {
			t.Fatal("b still counts the fleet's attempts a minute after its log went away")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if s := signUp(b, "192.0.2.80", "away@example.com"); s.status != http.StatusServiceUnavailable ||
		s.header.Get("Retry-After") == "" || !strings.Contains(string(s.body), "counted across every edge") {
		t.Errorf("a sign-up with the fleet's count away: %d %v %s", s.status, s.header, s.body)
	}
	for i := range 3 {
		if s := signIn(b, "192.0.2.90", "first@example.com", "wrong again"); s.status != http.StatusUnauthorized {
			t.Fatalf("failure %d with the log away: %d %s", i+1, s.status, s.body)
		}
	}
	if s := signIn(b, "192.0.2.90", "first@example.com", pw); s.status != http.StatusTooManyRequests {
		t.Errorf("with the log away, b's own ceiling let a fourth try through: %d", s.status)
	}
	// Back: b writes what it counted meanwhile, and a counts it.
	store.away.Store(false)
	for metricOf(t, b.Base, "edge_account_attempts_current") != 1 {
		if time.Now().After(deadline) {
			t.Fatal("b does not count the fleet's attempts again after its log came back")
		}
		time.Sleep(20 * time.Millisecond)
	}
	fleet(a, "signInPair", 4)
	if s := signIn(a, "192.0.2.90", "first@example.com", pw); s.status != http.StatusTooManyRequests {
		t.Errorf("after the log came back, a let the address try again: %d", s.status)
	}
	if s := signUp(b, "192.0.2.81", "back@example.com"); s.status != http.StatusCreated {
		t.Errorf("a sign-up after the log came back: %d %s", s.status, s.body)
	}
}

func (s *awayStore) Of(ctx context.Context, subject string, kinds []uint8, since time.Time) ([]analytics.Attempt, error) {
	if s.away.Load() {
		return nil, errAway
	}
	return s.Store.Of(ctx, subject, kinds, since)
}
