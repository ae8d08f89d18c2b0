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

// TestSignInThrottleAttacks performs the three attacks on /account's
// sign-in through HTTP, with client addresses named by
// a trusted proxy's X-Forwarded-For:
//   - a race: 60 parallel wrong passwords from one address are at most
//     SignInFailures guesses (each attempt is reserved before hashing);
//   - a lockout: an attacker failing from elsewhere does not lock the
//     owner out, until the per-address ceiling is reached from many
//     addresses at once;
//   - a flood of hashing: past the bounded wait for a hashing slot,
//     sign-ins answer 503 with Retry-After.
func TestSignInThrottleAttacks(t *testing.T) {
	const failures, ceiling = 4, 12
	h := start(t, chtestMigrated(t), func(c *edge.Config) {
		c.SignInFailures, c.SignInEmailFailures, c.SignUps = failures, ceiling, 100
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	})
	const pw = "the owner's password"
	from := func(addr string, hdr map[string]string) map[string]string {
		out := map[string]string{"X-Forwarded-For": addr}
		for k, v := range hdr {
			out[k] = v
		}
		return out
	}
	if a := call(t, "POST", h.Base+"/account", from("192.0.2.1", nil), `{"email":"owner@example.com","password":"`+pw+`"}`); a.status != 201 {
		t.Fatalf("sign up: %d %s", a.status, a.body)
	}
	keysURL := h.Base + "/account/keys"

	// The race: 60 wrong passwords at once from one address.
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for range 60 {
		wg.Go(func() {
			a := call(t, "GET", keysURL, from("198.51.100.9", basic("owner@example.com", "a wrong guess!")), "")
			mu.Lock()
			statuses[a.status]++
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[http.StatusUnauthorized] > failures || statuses[http.StatusUnauthorized]+statuses[http.StatusTooManyRequests] != 60 {
		t.Fatalf("60 parallel guesses: %v; want at most %d answered 401 (hashed), the rest 429", statuses, failures)
	}

	// The lockout: that attacker's failures do not lock the owner out
	// from the owner's own address.
	if a := call(t, "GET", keysURL, from("192.0.2.1", basic("owner@example.com", pw)), ""); a.status != 200 {
		t.Fatalf("the owner after an attack from elsewhere: %d %s", a.status, a.body)
	}
	// The owner's success took back its own attempt: sign in many times.
	for range 2 * failures {
		if a := call(t, "GET", keysURL, from("192.0.2.1", basic("owner@example.com", pw)), ""); a.status != 200 {
			t.Fatalf("repeated good sign-ins: %d %s", a.status, a.body)
		}
	}
	// Rotating addresses (each inside its own /64) reach the e-mail
	// address's ceiling; then it is throttled for everyone.
	guesses := statuses[http.StatusUnauthorized]
	for i := 0; guesses < ceiling; i++ {
		a := call(t, "GET", keysURL, from(fmt.Sprintf("2001:db8:%x::1", i), basic("owner@example.com", "a wrong guess!")), "")
		if a.status == http.StatusUnauthorized {
			guesses++
		} else if a.status != http.StatusTooManyRequests {
			t.Fatalf("rotating guess %d: %d %s", i, a.status, a.body)
		}
		if i > 10*ceiling {
			t.Fatal("the rotating guesses never reached the ceiling")
		}
	}
	a := call(t, "GET", keysURL, from("2001:db8:ffff::1", basic("owner@example.com", "another guess!")), "")
	problem(t, a, http.StatusTooManyRequests)
	if a.header.Get("Retry-After") == "" {
		t.Fatal("no Retry-After past the e-mail address's ceiling")
	}
	// Addresses inside one /64 are one client: rotating them gains nothing.
	for i := range failures {
		call(t, "GET", keysURL, from(fmt.Sprintf("2001:db8:aaaa:1::%x", i+1), basic("other@example.com", "a wrong guess!")), "")
	}
	problem(t, call(t, "GET", keysURL, from("2001:db8:aaaa:1::ffff", basic("other@example.com", "a wrong guess!")), ""), http.StatusTooManyRequests)
}

// TestSignInHashingWaitIsBounded: with every hashing slot busy longer
// than the wait, sign-ins answer 503 with Retry-After instead of queueing.
func TestSignInHashingWaitIsBounded(t *testing.T) {
	h := start(t, chtestMigrated(t), func(c *edge.Config) {
		c.HashWait = 1 // a nanosecond: only a free slot is taken
		c.SignInFailures, c.SignInEmailFailures = 1000, 1000
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	})
	var mu sync.Mutex
	statuses := map[int]int{}
	retry := ""
	var wg sync.WaitGroup
	for i := range 40 {
		wg.Go(func() {
			a := call(t, "GET", h.Base+"/account/keys", map[string]string{"X-Forwarded-For": fmt.Sprintf("203.0.113.%d", i+1),
				"Authorization": basic(fmt.Sprintf("u%d@example.com", i), "some password")["Authorization"]}, "")
			mu.Lock()
			statuses[a.status]++
			if a.status == http.StatusServiceUnavailable {
				retry = a.header.Get("Retry-After")
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	if statuses[http.StatusServiceUnavailable] == 0 || retry == "" || statuses[http.StatusUnauthorized] == 0 ||
		statuses[http.StatusUnauthorized]+statuses[http.StatusServiceUnavailable] != 40 {
		t.Fatalf("40 sign-ins at once with no wait for a hashing slot: %v (Retry-After %q); want some 401 and some 503", statuses, retry)
	}
}
