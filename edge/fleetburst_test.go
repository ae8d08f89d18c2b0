package edge_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"sync"
	"testing"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
)

// TestAccountLimitsHoldInABurstAcrossTheFleet (issue 66): three edges
// over one ClickHouse, each an HTTP server, take a burst of simultaneous
// sign-ups from one client address, then a burst of wrong passwords at
// one account from one address, spread over all three: exactly the
// limit is admitted across the fleet, each edge's own count alone
// notwithstanding (each edge sees fewer than the limit).
func TestAccountLimitsHoldInABurstAcrossTheFleet(t *testing.T) {
	d := chtestMigrated(t)
	const signUps, failures = 5, 3
	opts := func(c *edge.Config) {
		c.SignInFailures, c.SignInEmailFailures, c.SignUps = failures, 100, signUps
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	}
	edges := []*harness{start(t, d, opts), start(t, d, opts), start(t, d, opts)}
	burst := func(n int, req func(i int, h *harness) answer) map[int]int {
		var (
			mu     sync.Mutex
			counts = map[int]int{}
			wg     sync.WaitGroup
			go_    = make(chan struct{})
		)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-go_
				a := req(i, edges[i%len(edges)])
				mu.Lock()
				counts[a.status]++
				mu.Unlock()
			}()
		}
		close(go_)
		wg.Wait()
		return counts
	}

	// 12 sign-ups from one address, 4 an edge, against 5 an hour.
	got := burst(12, func(i int, h *harness) answer {
		return call(t, "POST", h.Base+"/account", map[string]string{"X-Forwarded-For": "192.0.2.100", "Content-Type": "application/json"},
			fmt.Sprintf(`{"email":"burst-%d@example.com","password":"long enough password"}`, i))
	})
	if got[http.StatusCreated] != signUps || got[http.StatusTooManyRequests] != 12-signUps {
		t.Errorf("a burst of 12 sign-ups from one address over 3 edges: %v, want %d × 201 and %d × 429", got, signUps, 12-signUps)
	}

	// 9 wrong passwords at one account from one address, 3 an edge,
	// against 3 failures in the window.
	got = burst(9, func(i int, h *harness) answer {
		hdr := basic("burst-0@example.com", fmt.Sprintf("wrong password %d", i))
		hdr["X-Forwarded-For"] = "192.0.2.101"
		return call(t, "GET", h.Base+"/account/keys", hdr, "")
	})
	if got[http.StatusUnauthorized] != failures || got[http.StatusTooManyRequests] != 9-failures {
		t.Errorf("a burst of 9 wrong passwords from one address over 3 edges: %v, want %d × 401 and %d × 429", got, failures, 9-failures)
	}
}
