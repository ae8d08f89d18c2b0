package edge_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/edge/egress"
	edgeproblem "github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/webhooks"
)

// names resolves names from a map a test changes as it goes.
type names struct {
	mu sync.Mutex
	to map[string]netip.Addr
}

func (n *names) set(name string, a netip.Addr) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.to[name] = a
}

func (n *names) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if a, ok := n.to[host]; ok {
		return []netip.Addr{a}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestWebhookNeverReachesOwnServicesHoweverNamed: the case (74,
// 5), over HTTP: the edge's ClickHouse named by a host name that
// resolves to 127.0.0.1 (as cmd/edge reads --ch-addr, with the edge on
// another address), and an allow list of every address. A webhook at any
// address that reaches this host — another loopback address, 0.0.0.0,
// ::, a mapped address, the host's interface address, the ClickHouse's
// name — on the ClickHouse's HTTP port (which the edge is not told) or
// its native port is refused when registered, with a problem+json; a
// webhook at a public name that later resolves to each of them is never
// delivered, and the ClickHouse table it aims at gets no row; a receiver
// the allow list names exactly is delivered to, by address and by name.
func TestWebhookNeverReachesOwnServicesHoweverNamed(t *testing.T) {
	ch := srvNeed(t)
	cfg, conn := ch.Migrated(t)
	ctx := context.Background()
	if err := conn.Exec(ctx, "CREATE TABLE "+cfg.Database+".pwned (type String) ENGINE = Memory"); err != nil {
		t.Fatal(err)
	}
	_, native, _ := net.SplitHostPort(cfg.Addr)
	httpPort := strconv.Itoa(int(netip.MustParseAddrPort(ch.HTTPAddr).Port()))
	var hits atomic.Int64
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rcv.Close()
	rcvAddr := netip.MustParseAddrPort(strings.TrimPrefix(rcv.URL, "http://"))

	res := &names{to: map[string]netip.Addr{"ch.internal": netip.MustParseAddr("127.0.0.1"), "rcv.example": rcvAddr.Addr()}}
	own := []string{"ch.internal:" + native} // the ClickHouse as the edge names it
	policy := egress.Policy{AllowHTTP: true, Resolver: res,
		Allow: append(allowOnly(rcv.URL), egress.Rule{Prefix: netip.MustParsePrefix("0.0.0.0/0")}, egress.Rule{Prefix: netip.MustParsePrefix("::/0")}),
		Deny:  egress.Own(ctx, res, own, 8123, 9000), Hosts: egress.OwnHosts(ctx, res, own)}
	h := start(t, edgetest.Dataset{CH: &cfg}, func(c *edge.Config) {
		c.Webhooks = webhooks.Config{Key: testWebhookKey, Reload: 100 * time.Millisecond, Timeout: 2 * time.Second, Policy: policy}
	})
	insert := "/?input_format_skip_unknown_fields=1&query=INSERT%20INTO%20" + cfg.Database + ".pwned%20FORMAT%20JSONEachRow"
	targets := []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("127.0.0.2"), netip.MustParseAddr("0.0.0.0"),
		netip.MustParseAddr("::"), netip.MustParseAddr("::ffff:127.0.0.1"), netip.MustParseAddr("::1")}
	for _, p := range egress.Local() {
		if a := p.Addr(); a.Is4() && !a.IsLoopback() && !a.IsUnspecified() {
			targets = append(targets, a) // this host's interface address
			break
		}
	}

	// Registered by address, on either port, or by the ClickHouse's name:
	// refused.
	const attacker = "attacker@example.com"
	signUpWithKey(t, h, attacker)
	auth := basic(attacker, "long enough password")
	var urls []string
	for _, a := range targets {
		for _, port := range []string{httpPort, native} {
			urls = append(urls, "http://"+net.JoinHostPort(a.String(), port)+insert)
		}
	}
	urls = append(urls, "http://ch.internal:"+httpPort+insert)
	// The caller is told what a private address gets too, neither that
	// it is the edge's own nor what allow entry would open it (the reason
	// goes to the log).
	generic := "url: " + edgeproblem.Sentence(egress.PublicRefusal) + "."
	for _, u := range urls {
		r := call(t, "POST", h.Base+"/account/webhooks", auth, `{"url":"`+u+`"}`)
		var p struct{ Detail string }
		if json.Unmarshal(r.body, &p); r.status != 400 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/problem+json") ||
			p.Detail != generic || strings.Contains(p.Detail, "EDGE_WEBHOOK_ALLOW") || strings.Contains(p.Detail, "ClickHouse") {
			t.Errorf("a webhook at %s: %d %s %s, want a 400 problem saying %q", u, r.status, r.header.Get("Content-Type"), r.body, generic)
		}
	}

	// Registered by a public name, which then resolves to each address:
	// never delivered (each account tests 3 deliveries at once).
	public := netip.MustParseAddr("93.184.216.34")
	for i := 0; i < len(targets); i += webhooks.TestBurst {
		email := "attacker" + strconv.Itoa(i) + "@example.com"
		signUpWithKey(t, h, email)
		auth := basic(email, "long enough password")
		for j, a := range targets[i:min(i+webhooks.TestBurst, len(targets))] {
			name := "hook" + strconv.Itoa(i+j) + ".attacker.example" // a name of its own: no connection kept for another
			res.set(name, public)
			r := call(t, "POST", h.Base+"/account/webhooks", auth, `{"url":"http://`+name+":"+httpPort+insert+`"}`)
			var hook struct{ ID string }
			if json.Unmarshal(r.body, &hook); r.status != 201 {
				t.Fatalf("a webhook at a public name: %d %s", r.status, r.body)
			}
			res.set(name, a)
			r = call(t, "POST", h.Base+"/account/webhooks/"+hook.ID+"/test", auth, "")
			var test struct {
				Delivered bool
				Delivery  struct{ Error string }
			}
			if json.Unmarshal(r.body, &test); r.status != 200 || test.Delivered || test.Delivery.Error != "refused: "+egress.PublicRefusal {
				t.Errorf("the test delivery after the name moved to %s: %d %s, want not delivered, refused as the edge's own", a, r.status, r.body)
			}
			if r := call(t, "DELETE", h.Base+"/account/webhooks/"+hook.ID, auth, ""); r.status != 204 {
				t.Fatalf("delete the webhook: %d %s", r.status, r.body)
			}
		}
	}
	var rows uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+cfg.Database+".pwned").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("the ClickHouse table the webhooks aimed at holds %d rows (%v), want none", rows, err)
	}

	// The receiver the allow list names exactly, by address and by name.
	const owner = "owner@example.com"
	signUpWithKey(t, h, owner)
	auth = basic(owner, "long enough password")
	for _, u := range []string{rcv.URL + "/hook", "http://rcv.example:" + strconv.Itoa(int(rcvAddr.Port())) + "/hook"} {
		r := call(t, "POST", h.Base+"/account/webhooks", auth, `{"url":"`+u+`"}`)
		var hook struct{ ID string }
		if json.Unmarshal(r.body, &hook); r.status != 201 {
			t.Fatalf("a webhook at the allowed receiver %s: %d %s", u, r.status, r.body)
		}
		before := hits.Load()
		r = call(t, "POST", h.Base+"/account/webhooks/"+hook.ID+"/test", auth, "")
		var test struct{ Delivered bool }
		if json.Unmarshal(r.body, &test); r.status != 200 || !test.Delivered || hits.Load() != before+1 {
			t.Errorf("the test delivery to the allowed receiver %s: %d %s (%d requests), want delivered", u, r.status, r.body, hits.Load()-before)
		}
	}
}
