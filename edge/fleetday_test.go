package edge_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/fleet/relay"
)

// awayUsage is a usage store that fails while away is set: an edge that
// is dead (nothing it writes lands, nothing it reads comes). It passes
// on the relay's sums and fresh reads when the store it wraps has them.
type awayUsage struct {
	usagelog.Store
	away atomic.Bool
}

func (s *awayUsage) Add(ctx context.Context, b analytics.UsageBatch, d []analytics.UsageDelta, again bool) error {
	if s.away.Load() {
		return errAway
	}
	return s.Store.Add(ctx, b, d, again)
}

func (s *awayUsage) Since(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, usagelog.Pos, error) {
	if s.away.Load() {
		return nil, pos, errAway
	}
	return s.Store.Since(ctx, day, pos)
}

func (s *awayUsage) SinceSums(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, *usagelog.Sums, usagelog.Pos, error) {
	if s.away.Load() {
		return nil, nil, pos, errAway
	}
	if ss, ok := s.Store.(usagelog.SummingStore); ok {
		return ss.SinceSums(ctx, day, pos)
	}
	changes, next, err := s.Store.Since(ctx, day, pos)
	return changes, nil, next, err
}

func (s *awayUsage) SinceFresh(ctx context.Context, day time.Time, pos usagelog.Pos) ([]analytics.UsageChange, *usagelog.Sums, usagelog.Pos, error) {
	if s.away.Load() {
		return nil, nil, pos, errAway
	}
	if f, ok := s.Store.(usagelog.FreshStore); ok {
		return f.SinceFresh(ctx, day, pos)
	}
	return s.SinceSums(ctx, day, pos)
}

// TestKeyedDayHoldsThroughLeaderFaults: three edges
// over one ClickHouse, the first leading (the others read the usage
// log's changes from it, package relay), a key of 120 calls a day. In
// each case bursts of the key's calls, 150 at once spread over the edges
// serving, meet a fault of the leader:
//   - paused: it takes the followers' reads and never answers (SIGSTOP),
//     and serves no one;
//   - cut off: the followers cannot reach it, and it goes on serving its
//     own clients;
//   - killed: it dies in the middle of the first burst (SIGKILL: nothing
//     it writes or reads later lands, nothing it counted and had not
//     written is flushed), and the others serve the second.
//
// Then each edge still serving is called until it answers 429. The fleet
// admits at most the day's 120 calls, every admitted call is in the
// usage log (limits' reserve.go: a key's calls are written before they
// are admitted), a refusal of a day used up is a 429 with Retry-After
// until midnight and RateLimit-Remaining: 0, and a refusal for a moment
// a 503 with Retry-After: 5.
func TestKeyedDayHoldsThroughLeaderFaults(t *testing.T) {
	d := chtestMigrated(t)
	const day, edgesN, burst = 120, 3, 150
	keyed := limits.Policy{PerMinute: 100000, PerDay: day}
	conn, err := analytics.Open(context.Background(), *d.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for n, fault := range []string{"paused", "cut off", "killed"} {
		t.Run(fault, func(t *testing.T) {
			var paused, cut atomic.Bool
			release := make(chan struct{})
			mux := http.NewServeMux()
			fleet := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				switch {
				case cut.Load():
					http.Error(w, "cut off", http.StatusBadGateway) // refused: the follower reads ClickHouse itself
					return
				case paused.Load():
					select { // a stopped process: the connection is taken, nothing answers
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				mux.ServeHTTP(w, r)
			}))
			t.Cleanup(func() { close(release); fleet.Close() })
			stores := make([]*awayUsage, edgesN)
			edges := make([]*harness, edgesN)
			for i := range edges {
				edges[i] = edgetest.StartWith(t, d, nil, func(src *edge.Sources) {
					base := usagelog.ClickHouse(src.SyncDB)
					if i == 0 {
						rec := relay.NewRecorder(base)
						mux.Handle(relay.UsagePath, rec)
						stores[i] = &awayUsage{Store: rec}
					} else {
						stores[i] = &awayUsage{Store: relay.NewStore(base, &relay.Client{Leader: func() string { return fleet.URL }})}
					}
					src.Usage = stores[i]
				}, withLimits(limits.DefaultConfig().Anonymous, keyed))
			}
			key, id := signUpWithKey(t, edges[0], fmt.Sprintf("keyed-day-%d@example.com", n))
			var (
				admitted, unsettledN, full atomic.Int64
				dead                       atomic.Bool // the leader killed: nothing reaches it
				mu                         sync.Mutex
				wrong                      []string
			)
			bad := func(format string, args ...any) {
				mu.Lock()
				defer mu.Unlock()
				if len(wrong) < 10 {
					wrong = append(wrong, fmt.Sprintf(format, args...))
				}
			}
			callOn := func(h *harness) int {
				if h == edges[0] && dead.Load() {
					return 0
				}
				a := call(t, "GET", h.Base+"/api/v1/tags", bearer(key), "")
				switch {
				case a.status == http.StatusUnauthorized: // the key not known there yet
				case a.status == http.StatusTooManyRequests:
					full.Add(1)
					_, remaining, reset, _ := rateHeaders(a)
					retry, _ := strconv.Atoi(a.header.Get("Retry-After"))
					// The day's refusal: until midnight (a minute's would
					// say less; none is near at 100000 a minute).
					if remaining != 0 || retry < reset-1 || retry > reset+1 {
						bad("a 429 with Retry-After %q, RateLimit-Remaining %d and -Reset %d: want until midnight, none left", a.header.Get("Retry-After"), remaining, reset)
					}
				case unsettled(a): // (a 503 of the route has the RateLimit headers: admitted)
					unsettledN.Add(1)
					if a.header.Get("Retry-After") != "5" {
						bad("a 503 with Retry-After %q: want 5 (%s)", a.header.Get("Retry-After"), a.body)
					}
				default:
					admitted.Add(1)
				}
				return a.status
			}
			// Every edge knows the key and has seen the others write usage
			// (and those of the cases before, within the hour).
			for _, h := range edges {
				waitFor(t, func() bool { return callOn(h) != http.StatusUnauthorized })
			}
			for _, h := range edges {
				waitFor(t, func() bool { return metricOf(t, h.Base, "edge_usage_fleet_edges") >= edgesN })
			}
			bursts := func(to []*harness, during func(i int)) {
				var wg sync.WaitGroup
				go_ := make(chan struct{})
				for i := range burst {
					wg.Go(func() {
						<-go_
						if during != nil {
							during(i)
						}
						callOn(to[i%len(to)])
					})
				}
				close(go_)
				wg.Wait()
			}
			serving := edges
			switch fault {
			case "paused":
				paused.Store(true)
				serving = edges[1:]
				bursts(serving, nil)
				bursts(serving, nil)
			case "cut off":
				cut.Store(true)
				bursts(edges, nil)
				bursts(edges, nil)
			case "killed":
				bursts(edges, func(i int) {
					if i == burst/2 { // in the middle of the burst
						dead.Store(true)
						stores[0].away.Store(true)
						cut.Store(true)
					}
				})
				serving = edges[1:]
				bursts(serving, nil)
			}
			// The day used: each edge still serving refuses it in the end.
			for _, h := range serving {
				waitFor(t, func() bool { return callOn(h) == http.StatusTooManyRequests })
			}
			stored := func() int64 {
				u, err := analytics.LoadUsage(context.Background(), conn, time.Now())
				if err != nil {
					t.Fatal(err)
				}
				return int64(u["key:"+id])
			}
			counted := stored()
			if got := admitted.Load(); got > day || got > counted || got == 0 {
				t.Errorf("the leader %s: %d calls admitted, %d in the usage log; want at most the day's %d, each in the log", fault, got, counted, day)
			}
			for _, w := range wrong {
				t.Error(w)
			}
			t.Logf("the leader %s: %d admitted, %d refused for the day, %d for a moment (503), %d in the usage log", fault, admitted.Load(), full.Load(), unsettledN.Load(), counted)
		})
	}
}
