package edge_test

import (
	"context"
	"encoding/json"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/edge/webhooks"
)

// rebinding resolves every name to the address it holds now.
type rebinding struct{ to atomic.Pointer[netip.Addr] }

func (r *rebinding) LookupNetIP(context.Context, string, string) ([]netip.Addr, error) {
	return []netip.Addr{*r.to.Load()}, nil
}

// TestWebhookNeverReachesOwnClickHouse: the attack (66, 2.1), a
// webhook at the HTTP port of the edge's own ClickHouse that would
// INSERT the delivery, with an allow list of the whole of loopback. It is
// refused when registered, and when a name that resolved to a public
// address at registration resolves to the ClickHouse's host at delivery
// (the check is made on each connection's address), and no row is
// written; the allow list that names the address and port admits exactly
// that port.
func TestWebhookNeverReachesOwnClickHouse(t *testing.T) {
	ch := srvNeed(t)
	cfg, conn := ch.Migrated(t)
	ctx := context.Background()
	if err := conn.Exec(ctx, "CREATE TABLE "+cfg.Database+".pwned (type String) ENGINE = Memory"); err != nil {
		t.Fatal(err)
	}
	chHTTP := netip.MustParseAddrPort(ch.HTTPAddr)
	res := &rebinding{}
	public := netip.MustParseAddr("1.1.1.1")
	res.to.Store(&public)
	policy := egress.Policy{Allow: []egress.Rule{{Prefix: netip.MustParsePrefix("127.0.0.0/8")}}, AllowHTTP: true, Resolver: res,
		Hosts: egress.OwnHosts(ctx, nil, []string{cfg.Addr})} // as cmd/edge gives them: the ClickHouse's host
	h := start(t, edgetest.Dataset{CH: &cfg}, func(c *edge.Config) {
		c.Webhooks = webhooks.Config{Key: testWebhookKey, Reload: 100 * time.Millisecond, Timeout: 2 * time.Second, Policy: policy}
	})
	const email = "attacker@example.com"
	signUpWithKey(t, h, email)
	auth := basic(email, "long enough password")
	insert := "/?input_format_skip_unknown_fields=1&query=INSERT%20INTO%20" + cfg.Database + ".pwned%20FORMAT%20JSONEachRow"

	// Registered by address: refused.
	r := call(t, "POST", h.Base+"/account/webhooks", auth, `{"url":"http://`+chHTTP.String()+insert+`"}`)
	if r.status != 400 || !strings.Contains(string(r.body), "not allowed for webhooks") {
		t.Fatalf("a webhook at the ClickHouse's HTTP port: %d %s, want a 400 naming the edge's own host", r.status, r.body)
	}
	// Registered by a name that resolves elsewhere, then to the
	// ClickHouse's host: refused at delivery.
	r = call(t, "POST", h.Base+"/account/webhooks", auth, `{"url":"http://ch.attacker.example:`+strconv.Itoa(int(chHTTP.Port()))+insert+`"}`)
	var hook struct{ ID string }
	if json.Unmarshal(r.body, &hook); r.status != 201 {
		t.Fatalf("a webhook at a public name: %d %s", r.status, r.body)
	}
	loop := chHTTP.Addr()
	res.to.Store(&loop)
	r = call(t, "POST", h.Base+"/account/webhooks/"+hook.ID+"/test", auth, "")
	var test struct {
		Delivered bool
		Delivery  struct{ Error string }
	}
	if json.Unmarshal(r.body, &test); r.status != 200 || test.Delivered || !strings.Contains(test.Delivery.Error, "not allowed for webhooks") {
		t.Errorf("the test delivery after the name moved to the ClickHouse's host: %d %s, want not delivered, refused", r.status, r.body)
	}
	var rows uint64
	if err := conn.QueryRow(ctx, "SELECT count() FROM "+cfg.Database+".pwned").Scan(&rows); err != nil || rows != 0 {
		t.Errorf("the ClickHouse table the webhook aimed at holds %d rows (%v), want none", rows, err)
	}

	// The narrow form admits exactly the port it names.
	narrow := egress.Policy{Allow: []egress.Rule{{Prefix: netip.PrefixFrom(loop, 32), Port: chHTTP.Port()}}, Hosts: policy.Hosts}
	if err := narrow.Check(chHTTP); err != nil {
		t.Errorf("an allow list naming %s refuses it: %v", chHTTP, err)
	}
	for _, ap := range []netip.AddrPort{netip.AddrPortFrom(loop, chHTTP.Port()+1), netip.AddrPortFrom(netip.MustParseAddr("127.0.0.2"), chHTTP.Port())} {
		if err := narrow.Check(ap); err == nil {
			t.Errorf("an allow list naming %s admits %s", chHTTP, ap)
		}
	}
}
