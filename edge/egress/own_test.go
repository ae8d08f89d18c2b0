package egress

import (
	"context"
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"
)

// everywhere is the most permissive allow list an operator could give.
var everywhere = []Rule{{Prefix: netip.MustParsePrefix("0.0.0.0/0")}, {Prefix: netip.MustParsePrefix("::/0")}}

// interfaceAddr returns an address of one of this host's interfaces that
// is not loopback, or skips.
func interfaceAddr(t testing.TB) netip.Addr {
	for _, p := range Local() {
		if a := p.Addr(); !a.IsLoopback() && !a.IsUnspecified() && a.Is4() {
			return a
		}
	}
	t.Skip("this host has no IPv4 interface address besides loopback")
	return netip.Addr{}
}

// TestOwnServicesHoweverNamed: the case (74, 5), a ClickHouse
// named by a host name that resolves to 127.0.0.1, and an allow list of
// everything: every address that reaches a service of this host —
// every loopback address, the unspecified ones, this host's interface
// addresses, however written — is refused on its ports, and on any port
// an entry does not name exactly; the ClickHouse's own ports even then.
// A name that resolves to this host's interface address, or does not
// resolve, counts as this host too; another host is its own address alone.
func TestOwnServicesHoweverNamed(t *testing.T) {
	ifAddr := interfaceAddr(t)
	res := &fakeResolver{answers: map[string][]string{
		"ch.internal": {"127.0.0.1"}, "self.internal": {ifAddr.String()}, "db.example": {"10.9.9.9"},
	}, asked: map[string]int{}}
	ctx := context.Background()
	for _, services := range [][]string{{"ch.internal:19000"}, {"self.internal:19000"}, {"gone.internal:19000"}, {"CH.Internal.:19000"}} {
		receiver := Rule{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 9999}
		mistaken := Rule{Prefix: netip.MustParsePrefix("127.0.0.2/32"), Port: 19000}
		p := &Policy{Allow: append([]Rule{receiver, mistaken}, everywhere...), AllowHTTP: true, Resolver: res,
			Deny: Own(ctx, res, services, 8123), Hosts: OwnHosts(ctx, res, services)}
		in := ifAddr.String()
		for raw, ok := range map[string]bool{
			"http://127.0.0.2:18123/?query=INSERT": false, // the ClickHouse's HTTP port, not configured
			"http://127.0.0.2:19000/":              false, // its native port, even when named exactly
			"http://127.0.0.1:19000/":              false,
			"http://127.3.4.5:8123/":               false,
			"http://0.0.0.0:18123/":                false,
			"http://[::]:18123/":                   false,
			"http://[::1]:19000/":                  false,
			"http://[::ffff:127.0.0.2]:18123/":     false,
			"http://[::ffff:7f00:2]:19000/":        false,
			"http://" + in + ":18123/":             false,
			"http://" + in + ":19000/":             false,
			"http://ch.internal:18123/":            false,
			"http://self.internal:18123/":          false,
			"http://127.0.0.1:9999/hook":           true, // the receiver the allow list names exactly
			"http://93.184.216.34/hook":            true,
			"http://10.9.9.9:443/":                 true, // another host: the allow list's to admit
		} {
			_, err := p.CheckURL(ctx, raw)
			if (err == nil) != ok || (err != nil && !errors.Is(err, ErrRefused)) {
				t.Errorf("ClickHouse at %s: %s: %v, want allowed %v", services[0], raw, err, ok)
			}
		}
	}
	// A service on another host is that host's addresses alone.
	remote := []string{"db.example:9000"}
	p := &Policy{Allow: everywhere, Resolver: res, Deny: Own(ctx, res, remote, 8123), Hosts: OwnHosts(ctx, res, remote)}
	for ap, ok := range map[string]bool{"10.9.9.9:8123": false, "10.9.9.9:18123": false, "10.9.9.10:8123": true} {
		if err := p.Check(netip.MustParseAddrPort(ap)); (err == nil) != ok {
			t.Errorf("ClickHouse at db.example: %s: %v, want allowed %v", ap, err, ok)
		}
	}
}

// TestLocal: every loopback and unspecified address and this host's
// interface addresses are this host's.
func TestLocal(t *testing.T) {
	local := Local()
	for _, s := range []string{"127.0.0.1", "127.0.0.2", "127.255.255.254", "::1", "0.0.0.0", "::", interfaceAddr(t).String()} {
		a := netip.MustParseAddr(s)
		found := false
		for _, p := range local {
			found = found || p.Contains(a)
		}
		if !found {
			t.Errorf("%s is not among this host's addresses %v", s, local)
		}
	}
}

// FuzzOwnNeverReached: with the edge's services on this host and an
// allow list of everything, no URL is taken whose host is an address of
// this host on the services' ports, however it is written (mapped,
// compatible, in another case, with leading zeros), and every refusal is
// ErrRefused.
func FuzzOwnNeverReached(f *testing.F) {
	for _, s := range []string{"http://127.0.0.2:19000/", "http://[::ffff:127.0.0.2]:8123/", "http://0.0.0.0:8123/", "http://[::]:19000/",
		"http://[0:0:0:0:0:ffff:7f00:2]:8123/", "http://127.000.000.002:8123/", "http://0x7f.0.0.2:8123/", "http://2130706434:8123/",
		"http://ch.internal:8123/", "http://[::1]:19000/", "http://127.0.0.1:9999/", "http://93.184.216.34:8123/", "HTTP://127.0.0.2:8123"} {
		f.Add(s)
	}
	res := &fakeResolver{answers: map[string][]string{"ch.internal": {"127.0.0.1"}}, asked: map[string]int{}}
	ctx := context.Background()
	services := []string{"ch.internal:19000"}
	p := &Policy{Allow: append([]Rule{{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 9999}}, everywhere...), AllowHTTP: true,
		Resolver: res, Deny: Own(ctx, res, services, 8123), Hosts: OwnHosts(ctx, res, services)}
	local := Local()
	f.Fuzz(func(t *testing.T, raw string) {
		res.asked = map[string]int{}
		u, err := p.CheckURL(ctx, raw)
		if err != nil {
			if !errors.Is(err, ErrRefused) {
				t.Fatalf("%q: %v, not a refusal", raw, err)
			}
			return
		}
		port := 80
		if u.Port() != "" {
			port, _ = strconv.Atoi(u.Port())
		} else if u.Scheme == "https" {
			port = 443
		}
		host := strings.Trim(u.Hostname(), "[]")
		a, err := netip.ParseAddr(host)
		if err != nil {
			if host == "ch.internal" {
				t.Fatalf("%q accepted: its name is the ClickHouse's", raw)
			}
			return
		}
		a = a.Unmap()
		for _, l := range local {
			if l.Contains(a) && !(a == netip.MustParseAddr("127.0.0.1") && port == 9999) {
				t.Fatalf("%q accepted: %s:%d is this host's", raw, a, port)
			}
		}
	})
}
