package edge_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/claims"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/edgetest"
)

// TestAccountLimitsHoldInABurstAcrossTheFleet: three edges
// over one ClickHouse, each an HTTP server, the first leading: the two
// others claim each account attempt from it (package claims, over its
// handler as the fleet address serves it). A burst of simultaneous
// sign-ups from one client address, then of wrong passwords at one
// account from one address, spread over all three, admits exactly the
// limit across the fleet, and every refusal says when to retry. Then the
// leader goes out of reach: each edge decides alone, and a right
// password is still admitted.
func TestAccountLimitsHoldInABurstAcrossTheFleet(t *testing.T) {
	d := chtestMigrated(t)
	const signUps, failures = 5, 3
	opts := func(c *edge.Config) {
		c.SignInFailures, c.SignInEmailFailures, c.SignUps = failures, 100, signUps
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	}
	lead := start(t, d, opts)
	fleet := httptest.NewServer(lead.Server.ClaimsHandler())
	t.Cleanup(fleet.Close)
	var away atomic.Bool
	leader := func() string {
		if away.Load() {
			return "http://127.0.0.1:1" // nothing listens there
		}
		return fleet.URL
	}
	follow := func(src *edge.Sources) { src.Claims = &claims.Client{Leader: leader, HTTP: fleet.Client()} }
	edges := []*harness{lead, edgetest.StartWith(t, d, nil, follow, opts), edgetest.StartWith(t, d, nil, follow, opts)}

	burst := func(n int, req func(i int, h *harness) answer) map[int]int {
		var (
			mu     sync.Mutex
			counts = map[int]int{}
			wg     sync.WaitGroup
			go_    = make(chan struct{})
		)
		for i := range n {
			wg.Go(func() {
				<-go_
				a := req(i, edges[i%len(edges)])
				mu.Lock()
				defer mu.Unlock()
				counts[a.status]++
				if ra := a.header.Get("Retry-After"); a.status == http.StatusTooManyRequests && (ra == "" || ra == "0" ||
					!strings.HasPrefix(a.header.Get("Content-Type"), "application/problem+json")) {
					counts[-1]++ // refused without a problem that says when to retry
				}
			})
		}
		close(go_)
		wg.Wait()
		return counts
	}
	signUp := func(addr string) func(i int, h *harness) answer {
		return func(i int, h *harness) answer {
			return call(t, "POST", h.Base+"/account", map[string]string{"X-Forwarded-For": addr, "Content-Type": "application/json"},
				fmt.Sprintf(`{"email":"burst-%s-%d@example.com","password":"long enough password"}`, addr, i))
		}
	}
	guess := func(email, addr string) func(i int, h *harness) answer {
		return func(i int, h *harness) answer {
			hdr := basic(email, fmt.Sprintf("wrong password %d", i))
			hdr["X-Forwarded-For"] = addr
			return call(t, "GET", h.Base+"/account/keys", hdr, "")
		}
	}

	owner := call(t, "POST", lead.Base+"/account", map[string]string{"X-Forwarded-For": "192.0.2.99", "Content-Type": "application/json"},
		`{"email":"owner@example.com","password":"long enough password"}`)
	if owner.status != http.StatusCreated {
		t.Fatalf("sign-up: %d %s", owner.status, owner.body)
	}

	// 12 sign-ups from one address, 4 an edge, against 5 an hour.
	got := burst(12, signUp("192.0.2.100"))
	if got[http.StatusCreated] != signUps || got[http.StatusTooManyRequests] != 12-signUps || got[-1] != 0 {
		t.Errorf("a burst of 12 sign-ups from one address over 3 edges: %v, want %d × 201 and %d × 429 (problem+json, Retry-After; -1 counts those without)", got, signUps, 12-signUps)
	}

	// 9 wrong passwords at one account from one address, 3 an edge,
	// against 3 failures in the window.
	got = burst(9, guess("owner@example.com", "192.0.2.101"))
	if got[http.StatusUnauthorized] != failures || got[http.StatusTooManyRequests] != 9-failures || got[-1] != 0 {
		t.Errorf("a burst of 9 wrong passwords from one address over 3 edges: %v, want %d × 401 and %d × 429 (problem+json, Retry-After; -1 counts those without)", got, failures, 9-failures)
	}

	// A right password, many times over, on every edge: each sign-in's
	// reservation is taken back, so none counts against the limit.
	for i := range 3 * failures {
		h := edges[i%len(edges)]
		hdr := basic("owner@example.com", "long enough password")
		hdr["X-Forwarded-For"] = "192.0.2.102"
		if a := call(t, "GET", h.Base+"/account/keys", hdr, ""); a.status != http.StatusOK {
			t.Fatalf("right password, sign-in %d: %d %s", i, a.status, a.body)
		}
	}

	// The leader out of reach: each edge decides alone, a right password
	// still gets in, and a sign-up from a new address is admitted.
	away.Store(true)
	for _, h := range edges {
		hdr := basic("owner@example.com", "long enough password")
		hdr["X-Forwarded-For"] = "192.0.2.103"
		if a := call(t, "GET", h.Base+"/account/keys", hdr, ""); a.status != http.StatusOK {
			t.Fatalf("right password with the leader away: %d %s", a.status, a.body)
		}
	}
	if a := signUp("192.0.2.104")(0, edges[1]); a.status != http.StatusCreated {
		t.Fatalf("a sign-up with the leader away: %d %s", a.status, a.body)
	}
}
