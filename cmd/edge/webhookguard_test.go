package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"testing"

	"github.com/edge-stats/edge/edge/egress"
)

// TestOwnServicesGuardedHoweverNamed: the case (74, 5) as edge
// serve reads its flags: the edge on an interface address, its
// ClickHouse named by this host's name (which resolves to this host) on
// a port of its own, and an allow list of every address. Every address
// of this host is refused on the ClickHouse's ports, on its HTTP port
// (which the edge is not told), and on the edge's own; only the receiver
// the allow list names exactly is reached.
func TestOwnServicesGuardedHoweverNamed(t *testing.T) {
	name, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	as, _ := net.DefaultResolver.LookupNetIP(context.Background(), "ip", name)
	var ifAddr netip.Addr
	for _, p := range egress.Local() {
		if a := p.Addr(); a.Is4() && !a.IsLoopback() && !a.IsUnspecified() {
			ifAddr = a
		}
	}
	if !ifAddr.IsValid() {
		t.Skip("this host has no IPv4 interface address besides loopback")
	}
	listen := netip.AddrPortFrom(ifAddr, 18080).String()
	c, err := parseServe([]string{"--ch-addr", net.JoinHostPort(name, "19000"), "--listen", listen,
		"--webhook-allow", "0.0.0.0/0,::/0,127.0.0.1:9999", "--webhook-allow-http"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	guardOwnServices(context.Background(), c, listen)
	p := c.srv.Webhooks.Policy
	refused := []string{"127.0.0.2:18123", "127.0.0.2:19000", "127.0.0.1:19000", "127.0.0.9:8123", "0.0.0.0:18123", "[::]:19000", "[::1]:18123",
		"[::ffff:127.0.0.2]:18123", netip.AddrPortFrom(ifAddr, 19000).String(), netip.AddrPortFrom(ifAddr, 18123).String(),
		"127.0.0.3:18080", listen}
	for _, a := range as {
		refused = append(refused, netip.AddrPortFrom(a.Unmap(), 18123).String())
	}
	for _, ap := range refused {
		if err := p.Check(netip.MustParseAddrPort(ap)); !errors.Is(err, egress.ErrRefused) {
			t.Errorf("with the ClickHouse at %s:19000 (%v) and the edge at %s, %s: %v, want refused", name, as, listen, ap, err)
		}
	}
	for _, ap := range []string{"127.0.0.1:9999", "93.184.216.34:443"} {
		if err := p.Check(netip.MustParseAddrPort(ap)); err != nil {
			t.Errorf("%s: %v, want allowed", ap, err)
		}
	}
}
