package edge_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/chtest/faultproxy"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/edge/webhooks"
	"github.com/edge-stats/edge/fleet/leader"
	"github.com/edge-stats/edge/views"
)

// hostResolver resolves every name to one address: each edge of the test
// reaches the receiver at an address of its own, so that the receiver
// tells which edge delivered.
type hostResolver netip.Addr

func (r hostResolver) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{netip.Addr(r)}, nil
}

// receipt is a delivery as a receiver saw it.
type receipt struct {
	event string
	by    string // the address the edge reached: which edge delivered
}

// leadReceiver takes deliveries on one port of two loopback addresses,
// slowly, and keeps them in the order they came.
type leadReceiver struct {
	port string
	mu   sync.Mutex
	got  []receipt
}

func newLeadReceiver(t *testing.T, addrs ...string) *leadReceiver {
	t.Helper()
	r := &leadReceiver{}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		var m struct{ Data struct{ EventID string } }
		json.Unmarshal(body, &m)
		local, _ := req.Context().Value(http.LocalAddrContextKey).(net.Addr)
		host, _, _ := net.SplitHostPort(local.String())
		r.mu.Lock()
		r.got = append(r.got, receipt{event: m.Data.EventID, by: host})
		r.mu.Unlock()
		time.Sleep(30 * time.Millisecond) // an endpoint that takes its time: deliveries are under way when the lead changes
		w.WriteHeader(http.StatusNoContent)
	})}
	var lns []net.Listener
	for try := 0; len(lns) < len(addrs) && try < 20; try++ {
		for _, l := range lns {
			l.Close()
		}
		lns = lns[:0]
		first, err := net.Listen("tcp", addrs[0]+":0")
		if err != nil {
			t.Fatal(err)
		}
		_, r.port, _ = net.SplitHostPort(first.Addr().String())
		lns = append(lns, first)
		for _, a := range addrs[1:] {
			l, err := net.Listen("tcp", net.JoinHostPort(a, r.port))
			if err != nil {
				break // the port is taken there: another
			}
			lns = append(lns, l)
		}
	}
	if len(lns) < len(addrs) {
		t.Fatalf("no port free on every one of %v", addrs)
	}
	for _, l := range lns {
		go srv.Serve(l)
	}
	t.Cleanup(func() { srv.Close() })
	return r
}

func (r *leadReceiver) receipts() []receipt {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.got)
}

// TestWebhooksInOrderWhenTheLeadExpires runs two edges whose leader is
// elected through ZooKeeper, and cuts the leader off from ZooKeeper
// without a word (its packets go nowhere) while it delivers a refresh's
// events to a slow endpoint: the leader's lease runs out and it stops
// delivering before ZooKeeper ends its session and the other edge leads;
// the other goes on from where the first stopped, so that the endpoint
// gets every event once, in the feed's order, the first edge's
// deliveries all before the second's. The cursor the second writes has
// its larger epoch, and a late write of the first edge's epoch does not
// move it back.
func TestWebhooksInOrderWhenTheLeadExpires(t *testing.T) {
	z := chtest.NeedZooKeeper(t)
	zkAddr := "127.0.0.1:" + strconv.Itoa(z.Port)
	cut, err := faultproxy.Start(zkAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	elect := func(id, server string) *leader.Elector {
		e, err := leader.Start(leader.Config{Servers: []string{server}, Path: "/edge/webhooks-test", ID: id, SessionTimeout: 2 * time.Second},
			slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		return e
	}
	ea := elect("edge-a", cut.Addr())
	waitUntil(t, 20*time.Second, "the first edge leads", ea.Leading)
	eb := elect("edge-b", zkAddr)
	waitUntil(t, 20*time.Second, "the second edge follows the first", func() bool { return eb.Leader() == "edge-a" && !eb.Leading() })

	addrA, addrB := "127.0.0.2", "127.0.0.3"
	rcv := newLeadReceiver(t, addrA, addrB)
	cfg := seeded(t)
	edges := [2]*harness{}
	for i, e := range []*leader.Elector{ea, eb} {
		to := netip.MustParseAddr([]string{addrA, addrB}[i])
		hook := func(c *edge.Config) {
			c.Webhooks = webhooks.Config{Key: testWebhookKey, Deliver: true, Reload: 100 * time.Millisecond, Timeout: time.Second, FirstTimeout: time.Second,
				Policy: egress.Policy{Allow: allowOnly("http://"+addrA+":"+rcv.port, "http://"+addrB+":"+rcv.port), AllowHTTP: true, Resolver: hostResolver(to)}}
		}
		edges[i] = edgetest.StartWith(t, cfg, nil, func(s *edge.Sources) { s.Leading, s.Epoch = e.Leading, e.Epoch }, hook)
		if err := edges[i].Jobs.RunNow("views"); err != nil {
			t.Fatal(err)
		}
	}
	a, b := edges[0], edges[1]
	email := "lead@example.com"
	signUpWithKey(t, a, email)
	r := call(t, "POST", a.Base+"/account/webhooks", basic(email, "long enough password"), `{"url": "http://hooks.test:`+rcv.port+`/all"}`)
	if r.status != 201 {
		t.Fatalf("register: %d %s", r.status, r.body)
	}
	var hook struct{ ID string }
	json.Unmarshal(r.body, &hook)

	// A refresh of many new versions: one event each.
	latest := getOK[eventPageJSON](t, b.Base+"/api/v1/events?limit=1").LatestCursor
	st := a.State.Load()
	now := st.Replica.Info().ReadingsMark.Add(time.Hour).Truncate(time.Second)
	var rows []analytics.ListingRow
	for _, l := range st.Replica.OfStore(views.Chrome)[:120] {
		if l.Live() {
			rows = append(rows, hookRow(l, now, func(r *analytics.ListingRow) { r.Version += ".1" }))
		}
	}
	cfg.Add(t, rows, nil)
	for _, h := range edges {
		if err := h.Jobs.RunNow("refresh"); err != nil {
			t.Fatal(err)
		}
	}
	page := getOK[eventPageJSON](t, b.Base+"/api/v1/events?limit=1000&since="+url.QueryEscape(*latest))
	var feed []string
	for _, e := range page.Events {
		feed = append(feed, e.EventID)
	}
	if len(feed) < 60 {
		t.Fatalf("the refresh made %d events, want at least 60", len(feed))
	}

	// The first edge delivers a while, then loses ZooKeeper.
	waitUntil(t, 20*time.Second, "the first edge's deliveries under way", func() bool { return len(rcv.receipts()) >= 10 })
	epochA := ea.Epoch()
	cut.Set(faultproxy.Blackhole, 0, 0)
	waitUntil(t, 60*time.Second, "every event delivered", func() bool { return len(rcv.receipts()) >= len(feed) })
	time.Sleep(500 * time.Millisecond) // anything more would be a second delivery

	got := rcv.receipts()
	index := map[string]int{}
	for i, id := range feed {
		index[id] = i
	}
	firstB := slices.IndexFunc(got, func(r receipt) bool { return r.by == addrB })
	switch {
	case len(got) != len(feed):
		t.Errorf("the endpoint got %d deliveries of %d events", len(got), len(feed))
	case firstB <= 0:
		t.Errorf("the first edge delivered %d events, the second the rest: want both to deliver", firstB)
	}
	for i, r := range got {
		if at, ok := index[r.event]; !ok || at != i {
			t.Errorf("delivery %d (by %s) is event %q, the feed's %d (%v)", i, r.by, r.event, at, ok)
		}
		if i >= firstB && firstB > 0 && r.by != addrB {
			t.Errorf("delivery %d came from the first edge after the second began delivering", i)
		}
	}
	t.Logf("%d events: %d delivered by the first edge (epoch %d), the rest by the second (epoch %d)", len(feed), firstB, epochA, eb.Epoch())

	// The cursor is the second edge's, of its epoch; a late write of the
	// first edge's epoch (newer, yet of the earlier lead) does not win.
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	want := webhookCursor(t, conn, hook.ID)
	if want.Epoch != uint64(eb.Epoch()) || eb.Epoch() <= epochA || want.Cursor == "" {
		t.Fatalf("the cursor %+v: want the second edge's epoch %d, larger than the first's %d", want, eb.Epoch(), epochA)
	}
	late := analytics.WebhookCursor{ID: hook.ID, Cursor: "", Epoch: uint64(epochA)}
	if err := analytics.WriteWebhookCursors(context.Background(), conn, []analytics.WebhookCursor{late}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// The second edge may still write its cursor forward meanwhile (its
	// last deliveries' cursor lands after them): the cursor is its own,
	// of its epoch, whichever it wrote last, and never the late write's.
	if got := webhookCursor(t, conn, hook.ID); got.Epoch != want.Epoch || got.Cursor == "" {
		t.Fatalf("after a late write of the earlier epoch the cursor is %+v, want the second edge's (epoch %d), as %+v", got, want.Epoch, want)
	}
}

// webhookCursor reads an endpoint's cursor.
func webhookCursor(t *testing.T, conn driver.Conn, id string) analytics.WebhookCursor {
	t.Helper()
	cs, err := analytics.LoadWebhookCursors(context.Background(), conn)
	if err != nil {
		t.Fatal(err)
	}
	return cs[id]
}
