package edge_test

import (
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/limits"
)

// limitsCallers reads edge_limits_callers{set} from /metrics.
func limitsCallers(t *testing.T, h *harness, set string) int {
	t.Helper()
	prefix := `edge_limits_callers{set="` + set + `"} `
	for line := range strings.SplitSeq(string(get(t, "GET", h.Base+"/metrics").body), "\n") {
		if v, ok := strings.CutPrefix(line, prefix); ok {
			f, _ := strconv.ParseFloat(v, 64)
			return int(f)
		}
	}
	t.Fatalf("no %s in /metrics", prefix)
	return 0
}

// TestPerAddressStateIsBounded is the attack of many addresses: 3,000
// callers, each its own IPv6 /64 named through a trusted proxy, use up
// their day on an edge whose limits hold at most 400 callers with their
// minute's window and 500 in the day's totals. The state stays within
// its bounds, and no eviction admits a call past a day: a victim that
// used its day before the flood is still refused after it, although the
// flood evicted it from both.
func TestPerAddressStateIsBounded(t *testing.T) {
	const maxActive, maxSubjects, flood, perDay = 400, 500, 3000, 3
	h := start(t, synthetic(t), withLimits(limits.Policy{PerMinute: 1000, PerDay: perDay}, limits.Policy{PerMinute: 1000, PerDay: 1000}),
		func(c *edge.Config) {
			c.Limits.MaxActive, c.Limits.MaxSubjects = maxActive, maxSubjects
			c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32")}
		})
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	from := func(addr string) answer {
		return call(t, "GET", h.Base+"/api/v1/tags", map[string]string{"X-Forwarded-For": addr}, "")
	}
	waitSynced := func() { time.Sleep(350 * time.Millisecond) } // the usage syncs every 100 ms in tests
	victim := "2001:db8:ffff:ffff::1"
	for i := range perDay {
		if a := from(victim); a.status != 200 {
			t.Fatalf("victim call %d: %d", i+1, a.status)
		}
	}
	problem(t, from(victim), http.StatusTooManyRequests)
	waitSynced()

	var refused atomic.Int64
	var wg sync.WaitGroup
	next := atomic.Int64{}
	for range 8 {
		wg.Go(func() {
			for i := next.Add(1) - 1; i < flood && !t.Failed(); i = next.Add(1) - 1 {
				addr := fmt.Sprintf("2001:db8:%x:%x::1", i>>16, i&0xffff)
				admitted := 0
				for range perDay + 1 {
					switch a := from(addr); a.status {
					case http.StatusTooManyRequests:
						refused.Add(1)
					case http.StatusOK:
						admitted++
					default:
						t.Errorf("%s: %d %s", addr, a.status, a.body)
					}
				}
				if admitted > perDay {
					t.Errorf("%s: %d calls admitted, the day allows %d", addr, admitted, perDay)
				}
			}
		})
	}
	wg.Wait()
	// Every caller is refused at least its 4th call; a few more are
	// refused early, when their hash meets an evicted caller's floor.
	if r := refused.Load(); r < flood || r > flood+flood/50 {
		t.Fatalf("%d calls of %d callers were refused; want each caller's 4th, and few more", r, flood)
	}
	waitSynced()
	if n := limitsCallers(t, h, "minute"); n > maxActive {
		t.Errorf("%d callers held with their minute's window, bound %d", n, maxActive)
	}
	if n := limitsCallers(t, h, "day"); n > maxSubjects {
		t.Errorf("%d callers held in the day's totals, bound %d", n, maxSubjects)
	}
	a := from(victim)
	problem(t, a, http.StatusTooManyRequests)
	if !strings.Contains(string(a.body), "day") {
		t.Fatalf("the victim is refused, but not for its day: %s", a.body)
	}
	// A caller never seen is still served.
	if a := from("2001:db8:eeee:1::1"); a.status != 200 {
		t.Fatalf("a new caller after the flood: %d %s", a.status, a.body)
	}
}
