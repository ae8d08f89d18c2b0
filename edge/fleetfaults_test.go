package edge_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/attempts"
	"github.com/edge-stats/edge/edge/claims"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/edgetest"
)

// TestSignUpsHoldThroughLeaderFaults: three edges over one
// ClickHouse, the first leading, the two others claiming each sign-up
// from it (package claims). In each case a burst of sign-ups from one
// address meets a fault of the leader, then a second burst goes to the
// edges still serving, and across both the fleet admits no more than the
// limit:
//   - killed: the leader decides the first burst, then dies at once
//     (nothing it writes afterwards lands: SIGKILL's in-process
//     equivalent, with its attempts sync never due), and the second edge
//     leads;
//   - paused: the leader takes the followers' claims and never answers
//     (SIGSTOP): each follower decides alone, both bursts;
//   - cut off: the followers cannot reach the leader, which goes on
//     serving its own clients: every edge decides alone;
//   - no count: as cut off, with the attempts log out of reach of every
//     edge: nothing is admitted, and each refusal is a 503 problem with
//     Retry-After: 5.
func TestSignUpsHoldThroughLeaderFaults(t *testing.T) {
	d := chtestMigrated(t)
	const limit, burst = 5, 12
	opts := func(c *edge.Config) {
		c.SignUps = limit
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
	}
	cases := []struct {
		name  string
		fault string
	}{
		{"killed", "kill"},
		{"paused", "pause"},
		{"cut off", "cut"},
		{"no count", "nocount"},
	}
	for n, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr := fmt.Sprintf("198.51.100.%d", 10+n)
			stores := make([]*awayStore, 3)
			for i := range stores {
				stores[i] = &awayStore{Store: attempts.ClickHouse(analytics.NewLazy(*d.CH))}
			}
			// The leader's attempts sync is never due within the test: what
			// it decided is in the log only if it was written before the
			// answer.
			lead := edgetest.StartWith(t, d, nil, func(src *edge.Sources) { src.Attempts = stores[0] }, opts,
				func(c *edge.Config) { c.UsageEvery = time.Hour })
			claimsOf := lead.Server.ClaimsHandler()
			var paused atomic.Bool
			release := make(chan struct{})
			fleet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if paused.Load() {
					select { // a stopped process: the connection is taken, nothing answers
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				claimsOf.ServeHTTP(w, r)
			}))
			t.Cleanup(func() { close(release); fleet.Close() })
			var leader atomic.Pointer[string]
			at := fleet.URL
			leader.Store(&at)
			follow := func(i int) func(src *edge.Sources) {
				return func(src *edge.Sources) {
					src.Attempts = stores[i]
					src.Claims = &claims.Client{Leader: func() string { return *leader.Load() }, HTTP: fleet.Client()}
				}
			}
			edges := []*harness{lead, edgetest.StartWith(t, d, nil, follow(1), opts), edgetest.StartWith(t, d, nil, follow(2), opts)}

			signUps := func(round int, to []*harness) map[int]int {
				var (
					mu     sync.Mutex
					counts = map[int]int{}
					wg     sync.WaitGroup
					go_    = make(chan struct{})
				)
				for i := range burst {
					wg.Go(func() {
						<-go_
						a := call(t, "POST", to[i%len(to)].Base+"/account", map[string]string{"X-Forwarded-For": addr, "Content-Type": "application/json"},
							fmt.Sprintf(`{"email":"fault-%d-%d-%d@example.com","password":"long enough password"}`, n, round, i))
						mu.Lock()
						defer mu.Unlock()
						counts[a.status]++
						if a.status != http.StatusCreated && a.header.Get("Retry-After") == "" {
							counts[-1]++ // refused without saying when to retry
						}
						if a.status == http.StatusServiceUnavailable && a.header.Get("Retry-After") != "5" {
							counts[-2]++ // a count that cannot be checked: Retry-After: 5
						}
					})
				}
				close(go_)
				wg.Wait()
				return counts
			}

			var first, second map[int]int
			switch c.fault {
			case "kill":
				first = signUps(0, edges[1:]) // every claim decided by the leader
				stores[0].away.Store(true)    // dead: nothing more of it lands
				// The second edge leads: it decides, the third claims from it.
				nextFleet := httptest.NewServer(edges[1].Server.ClaimsHandler())
				t.Cleanup(nextFleet.Close)
				u := nextFleet.URL
				leader.Store(&u)
				second = signUps(1, edges[1:])
			case "pause":
				paused.Store(true)
				first = signUps(0, edges[1:])
				second = signUps(1, edges[1:])
			case "cut", "nocount":
				if c.fault == "nocount" {
					for _, s := range stores {
						s.away.Store(true)
					}
				}
				down := "http://127.0.0.1:1" // nothing listens there
				leader.Store(&down)
				first = signUps(0, edges)
				second = signUps(1, edges)
			}
			admitted := first[http.StatusCreated] + second[http.StatusCreated]
			want := limit
			if c.fault == "nocount" {
				want = 0
			}
			if admitted > want || first[-1]+second[-1]+first[-2]+second[-2] != 0 || c.fault == "kill" && first[http.StatusCreated] != limit {
				t.Errorf("two bursts of %d sign-ups from one address, the leader %s: %v then %v: %d admitted, want at most %d (exactly %d in the first burst when the leader decides it), every refusal with Retry-After (-1 counts those without; -2 the 503s without Retry-After: 5)",
					burst, c.name, first, second, admitted, want, limit)
			}
			if c.fault == "nocount" && first[http.StatusServiceUnavailable] != burst {
				t.Errorf("with the attempts log out of reach: %v, want %d × 503", first, burst)
			}
		})
	}
}
