package egress

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// envInNetns marks the test binary run again inside a network namespace
// of its own (TestAddressGainedAfterStartRefused).
const envInNetns = "EDGE_EGRESS_TEST_IN_NETNS"

// TestAddressGainedAfterStartRefused: an address this host gains after
// the policy was made (here a public one, 8.8.4.4, added to loopback, as
// a new IPv6 privacy address, a DHCP lease or a moved virtual IP would
// be) is this host's too: a service of this host listening on every
// interface (standing for ClickHouse's HTTP port) is not reached there,
// although no allow list names it. A policy with Local refuses the URL
// when registered; one without (its hosts read at start only) still
// never delivers, since a connection whose source is its destination is
// closed. The test runs itself again in a network namespace of its own
// (unshare -n, as root), so that the address it adds is gone with it.
func TestAddressGainedAfterStartRefused(t *testing.T) {
	if os.Getenv(envInNetns) == "" {
		if os.Geteuid() != 0 {
			t.Skip("needs root, to make a network namespace of its own (unshare -n) and add an address in it")
		}
		unshare, err := exec.LookPath("unshare")
		if err != nil {
			t.Fatalf("unshare (util-linux) is needed to make a network namespace: %v", err)
		}
		cmd := exec.Command(unshare, "-n", os.Args[0], "-test.run=^TestAddressGainedAfterStartRefused$", "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), envInNetns+"=1")
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), "--- PASS: TestAddressGainedAfterStartRefused") {
			t.Fatalf("in a network namespace of its own: %v\n%s", err, out)
		}
		return
	}
	if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
		t.Fatalf("ip link set lo up: %v %s", err, out)
	}
	var hits atomic.Int64
	ln, err := net.Listen("tcp", ":0") // every interface, as a ClickHouse of this host may listen
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hits.Add(1) }))
	srv.Listener = ln
	srv.Start()
	defer srv.Close()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)

	// The policies as made at start, before the address is added.
	ctx := context.Background()
	own := []string{"127.0.0.1:" + port}
	cache := NewLocalCache(time.Millisecond)
	cache.Prefixes()
	withLocal := &Policy{AllowHTTP: true, Deny: Own(ctx, nil, own), Hosts: OwnHosts(ctx, nil, own), Local: cache}
	atStart := &Policy{AllowHTTP: true, Deny: Own(ctx, nil, own), Hosts: OwnHosts(ctx, nil, own)}

	gained := "8.8.4.4"
	if out, err := exec.Command("ip", "addr", "add", gained+"/32", "dev", "lo").CombinedOutput(); err != nil {
		t.Fatalf("ip addr add: %v %s", err, out)
	}
	time.Sleep(10 * time.Millisecond) // past the cache's interval
	for _, raw := range []string{"http://" + gained + ":" + port + "/", "http://" + gained + ":8123/"} {
		_, err := withLocal.CheckURL(ctx, raw)
		var ae *AddressError
		if !errors.As(err, &ae) || !errors.Is(err, ErrRefused) || ae.Addr.Addr() != netip.MustParseAddr(gained) {
			t.Errorf("CheckURL(%s) after the host gained %s: %v, want refused as this host's", raw, gained, err)
		}
		if Public(err) != PublicRefusal {
			t.Errorf("a caller is told %q, want %q", Public(err), PublicRefusal)
		}
	}
	u, err := atStart.CheckURL(ctx, "http://"+gained+":"+port+"/")
	if err != nil {
		t.Fatalf("a policy of the start's addresses alone refuses the URL at registration: %v (this test wants it past, to try the connection's check)", err)
	}
	for _, p := range []*Policy{atStart, withLocal} {
		resp, err := p.Client(2 * time.Second).Get(u.String())
		if err == nil {
			resp.Body.Close()
		}
		if !errors.Is(err, ErrRefused) {
			t.Errorf("a delivery to %s (local %v): %v, want refused", u, p.Local != nil, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the service of this host got %d requests through %s, want none", n, gained)
	}

	// A receiver the allow list names exactly is still reached there.
	exact := &Policy{AllowHTTP: true, Local: cache, Allow: []Rule{{Prefix: netip.MustParsePrefix(gained + "/32"), Port: uint16(ln.Addr().(*net.TCPAddr).Port)}}}
	resp, err := exact.Client(2 * time.Second).Get(u.String())
	if err != nil {
		t.Fatalf("the receiver the allow list names exactly: %v", err)
	}
	resp.Body.Close()
	if hits.Load() != 1 {
		t.Errorf("the receiver the allow list names exactly got %d requests, want 1", hits.Load())
	}
}
