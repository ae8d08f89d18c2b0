// Package egress is what the edge may connect to on behalf of a caller:
// a webhook's URL is checked when it is registered (CheckURL) and again at
// every connection (Client), so that a caller cannot make the edge reach
// its own network — loopback, private, link-local and cloud metadata
// addresses — directly, through a name that resolves there, or through a
// name that resolves elsewhere first and there later (DNS rebinding).
// Redirects are not followed and answers are read only up to a bound.
package egress

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Rule is a range of addresses, on one port or every port.
type Rule struct {
	Prefix netip.Prefix
	Port   uint16 // 0: every port
}

func (r Rule) matches(ap netip.AddrPort) bool {
	return r.Prefix.Contains(ap.Addr()) && (r.Port == 0 || r.Port == ap.Port())
}

func (r Rule) String() string {
	if r.Port == 0 {
		return r.Prefix.String()
	}
	if r.Prefix.Addr().Is6() {
		return "[" + r.Prefix.String() + "]:" + strconv.Itoa(int(r.Port))
	}
	return r.Prefix.String() + ":" + strconv.Itoa(int(r.Port))
}

// ParseRules reads a comma-separated list of addresses or CIDR ranges,
// each with a port or none: 127.0.0.1:9999, 10.0.0.0/8,
// 10.0.0.0/8:443, [::1]:9999, [fd00::/8]:443, ::1. An address is a range
// of one.
func ParseRules(s string) ([]Rule, error) {
	var out []Rule
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		r, err := parseRule(f)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

func parseRule(f string) (Rule, error) {
	bad := fmt.Errorf("%q: want an address or CIDR range, with :port or without (127.0.0.1:9999, 10.0.0.0/8, [::1]:9999)", f)
	host, port := f, ""
	switch {
	case strings.HasPrefix(f, "["):
		end := strings.Index(f, "]")
		if end < 0 {
			return Rule{}, bad
		}
		host, port = f[1:end], f[end+1:]
		if port != "" {
			var ok bool
			if port, ok = strings.CutPrefix(port, ":"); !ok {
				return Rule{}, bad
			}
		}
	case strings.Count(f, ":") == 1: // IPv4 with a port
		host, port, _ = strings.Cut(f, ":")
	}
	var r Rule
	if strings.Contains(host, "/") {
		p, err := netip.ParsePrefix(host)
		if err != nil {
			return Rule{}, bad
		}
		r.Prefix = p.Masked()
	} else {
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return Rule{}, bad
		}
		r.Prefix = netip.PrefixFrom(a, a.BitLen())
	}
	if a := r.Prefix.Addr(); a.Is4In6() {
		r.Prefix = netip.PrefixFrom(a.Unmap(), max(r.Prefix.Bits()-96, 0))
	}
	if port != "" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Rule{}, bad
		}
		r.Port = uint16(n)
	}
	return r, nil
}

// Policy says which URLs and addresses a caller may make the edge reach.
type Policy struct {
	// Allow lists ranges reachable even though they are not public (the
	// operator's choice: the tests allow loopback), best each with its
	// receiver's port.
	Allow []Rule
	// Deny lists the edge's own services (its listen and fleet
	// addresses, its ClickHouse and ZooKeeper): never reached, whatever
	// Allow says.
	Deny []Rule
	// Hosts are the addresses of the hosts that run the edge's own
	// services (its ClickHouse, its ZooKeeper, the edge itself): a webhook
	// reaches a port of one only when Allow names that address and port
	// exactly (a rule of one address with a port), since the edge cannot
	// know every port such a host serves (ClickHouse's HTTP interface,
	// which takes SQL, listens wherever its operator put it).
	Hosts []netip.Prefix
	// AllowHTTP admits http:// URLs; otherwise only https://.
	AllowHTTP bool
	// Resolver looks names up (nil: the system's).
	Resolver Resolver
}

// Resolver looks a name up, as net.DefaultResolver does.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// resolver returns r, or the system's resolver when r is nil.
func resolver(r Resolver) Resolver {
	if r == nil {
		return net.DefaultResolver
	}
	return r
}

// ErrRefused wraps every refusal of a URL or an address.
var ErrRefused = errors.New("refused")

// blocked are ranges that are not public beyond what netip's predicates
// tell: shared (carrier-grade NAT), this network, IETF protocol
// assignments, documentation and benchmarking, reserved, and the IPv6
// translation, discard and documentation prefixes.
var blocked = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("198.51.100.0/24"),
	netip.MustParsePrefix("203.0.113.0/24"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("100::/64"),
	netip.MustParsePrefix("2001:db8::/32"),
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds an IPv4 address
	netip.MustParsePrefix("2001::/32"),       // Teredo: embeds an IPv4 address
	netip.MustParsePrefix("::/96"),           // IPv4-compatible (deprecated): embeds an IPv4 address
	netip.MustParsePrefix("::ffff:0:0/96"),   // IPv4-mapped, should one reach here unmapped
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated (RFC 2765)
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated, still routed inside some networks)
}

// Why returns why a is not public ("" when it is): what a refusal names.
// A zone (fe80::1%eth0) is no part of the address for this question.
func Why(a netip.Addr) string {
	a = a.WithZone("").Unmap()
	switch {
	case !a.IsValid():
		return "not an address"
	case a.IsLoopback():
		return "loopback"
	case a.IsPrivate():
		return "private"
	case a.IsLinkLocalUnicast():
		return "link-local (cloud metadata lives there)"
	case a.IsUnspecified():
		return "unspecified"
	case a.IsMulticast(), a.IsLinkLocalMulticast(), a.IsInterfaceLocalMulticast():
		return "multicast"
	case a.Is4() && a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	for _, p := range blocked {
		if p.Contains(a) {
			return "reserved (" + p.String() + ")"
		}
	}
	return ""
}

// Check returns an error wrapping ErrRefused when ap may not be reached:
// one of the edge's own services (Deny), or an address that is not
// public and not allowed. A zone is stripped before every check.
func (p *Policy) Check(ap netip.AddrPort) error {
	a := ap.Addr().WithZone("").Unmap()
	ap = netip.AddrPortFrom(a, ap.Port())
	for _, r := range p.Deny {
		if r.matches(ap) {
			return fmt.Errorf("%w: %s is one of this service's own addresses", ErrRefused, ap)
		}
	}
	if p.ownHost(a) {
		if p.namesExactly(ap) {
			return nil
		}
		return fmt.Errorf("%w: %s is on a host of this service's own (its ClickHouse, its ZooKeeper or the edge itself), which a webhook reaches only on a port the allow list names with this very address (EDGE_WEBHOOK_ALLOW=%s)",
			ErrRefused, ap, ap)
	}
	for _, r := range p.Allow {
		if r.matches(ap) {
			return nil
		}
	}
	if why := Why(a); why != "" {
		return fmt.Errorf("%w: %s is %s", ErrRefused, a, why)
	}
	return nil
}

// ownHost reports whether a is an address of a host of the edge's own
// services.
func (p *Policy) ownHost(a netip.Addr) bool {
	for _, h := range p.Hosts {
		if h.Contains(a) {
			return true
		}
	}
	return false
}

// namesExactly reports whether Allow has a rule of ap's address alone
// and its port.
func (p *Policy) namesExactly(ap netip.AddrPort) bool {
	for _, r := range p.Allow {
		if r.Port == ap.Port() && r.Prefix.IsSingleIP() && r.Prefix.Addr() == ap.Addr() {
			return true
		}
	}
	return false
}

// CheckURL parses raw as a webhook URL and checks it: https (or http when
// allowed), a host and no user name or password, at most 2,048 bytes, a
// port of 1 to 65535, and every address its host resolves to reachable.
// The returned URL is what deliveries use.
func (p *Policy) CheckURL(ctx context.Context, raw string) (*url.URL, error) {
	if len(raw) > 2048 {
		return nil, fmt.Errorf("%w: a URL of at most 2,048 bytes", ErrRefused)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: not a URL", ErrRefused)
	}
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && p.AllowHTTP:
	case u.Scheme == "http":
		return nil, fmt.Errorf("%w: use https (this service delivers over TLS only)", ErrRefused)
	default:
		return nil, fmt.Errorf("%w: use an https URL", ErrRefused)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: no user name or password in the URL (sign deliveries with the secret instead)", ErrRefused)
	}
	if u.Opaque != "" || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: a URL with a host, such as https://hooks.example.com/edge", ErrRefused)
	}
	if strings.Contains(u.Host, "%") {
		return nil, fmt.Errorf("%w: no zone (%%) in the host: give a public address or name", ErrRefused)
	}
	port := uint16(443)
	if u.Scheme == "http" {
		port = 80
	}
	if ps := u.Port(); ps != "" {
		n, err := strconv.Atoi(ps)
		if err != nil || n < 1 || n > 65535 {
			return nil, fmt.Errorf("%w: a port from 1 to 65535", ErrRefused)
		}
		port = uint16(n)
	}
	u.Fragment, u.RawFragment = "", ""
	addrs, err := p.resolve(ctx, u.Hostname())
	if err != nil {
		return nil, err
	}
	for _, a := range addrs {
		if err := p.Check(netip.AddrPortFrom(a, port)); err != nil {
			return nil, fmt.Errorf("%s resolves to a refused address: %w", u.Hostname(), err)
		}
	}
	return u, nil
}

// resolve returns the addresses of host: itself when it is one.
func (p *Policy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := resolver(p.Resolver).LookupNetIP(ctx, "ip", host)
	if err != nil || len(addrs) == 0 {
		return nil, fmt.Errorf("%w: %s does not resolve", ErrRefused, host)
	}
	return addrs, nil
}

// Own returns the rules that deny the services at hostPorts (host:port,
// or :port for every interface) on each of ports as well as the port
// given, at every address OwnHosts gives for it.
func Own(ctx context.Context, r Resolver, hostPorts []string, ports ...uint16) []Rule {
	var out []Rule
	for _, hp := range hostPorts {
		all := slices.Clone(ports)
		if _, ps, err := net.SplitHostPort(hp); err == nil {
			if n, err := strconv.Atoi(ps); err == nil && n > 0 && n < 65536 {
				all = append(all, uint16(n))
			}
		}
		for _, p := range OwnHosts(ctx, r, []string{hp}) {
			for _, port := range all {
				out = append(out, Rule{Prefix: p, Port: port})
			}
		}
	}
	return out
}

// OwnHosts returns every address that reaches the services at hostPorts
// (host:port; a host alone is read as one), however they are named
// (Policy.Hosts). A name is resolved with r (nil: the system's resolver)
// and each of its addresses read as a literal one would be. A service
// whose address is this host's own — loopback, unspecified (every
// interface), one of its interfaces' addresses, localhost — may be bound
// to any of them, so it is reached at every address Local gives; another
// address is the service's alone. A name that does not resolve now may
// name this host later, so it counts as this host's.
func OwnHosts(ctx context.Context, r Resolver, hostPorts []string) []netip.Prefix {
	local := Local()
	var prefixes []netip.Prefix
	isLocal := false
	add := func(a netip.Addr) {
		a = a.WithZone("").Unmap()
		if a.IsLoopback() || a.IsUnspecified() || slices.ContainsFunc(local, func(p netip.Prefix) bool { return p.Contains(a) }) {
			isLocal = true
			return
		}
		prefixes = append(prefixes, netip.PrefixFrom(a, a.BitLen()))
	}
	for _, hp := range hostPorts {
		host, _, err := net.SplitHostPort(hp)
		if err != nil {
			host = strings.Trim(hp, "[]")
		}
		name := strings.TrimSuffix(strings.ToLower(host), ".")
		if a, err := netip.ParseAddr(host); err == nil {
			add(a)
			continue
		}
		if name == "" || name == "localhost" || strings.HasSuffix(name, ".localhost") {
			isLocal = true
			continue
		}
		as, err := resolver(r).LookupNetIP(ctx, "ip", host)
		if err != nil || len(as) == 0 {
			isLocal = true
			continue
		}
		for _, a := range as {
			add(a)
		}
	}
	if isLocal {
		prefixes = append(prefixes, local...)
	}
	slices.SortFunc(prefixes, func(a, b netip.Prefix) int {
		if c := a.Addr().Compare(b.Addr()); c != 0 {
			return c
		}
		return a.Bits() - b.Bits()
	})
	return slices.Compact(prefixes)
}

// Local returns every address at which a service of this host can be
// reached, whatever address it was bound to: all of loopback (Linux
// answers every address of 127.0.0.0/8 on its loopback interface, so a
// service bound to 127.0.0.1 or to every interface answers at
// 127.0.0.2 too), the unspecified addresses (a connection to 0.0.0.0 or
// :: reaches this host), and every address of this host's interfaces (a
// service bound to every interface answers at each).
func Local() []netip.Prefix {
	out := []netip.Prefix{
		netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128"),
		netip.MustParsePrefix("0.0.0.0/32"), netip.MustParsePrefix("::/128"),
	}
	if ifs, err := net.InterfaceAddrs(); err == nil {
		for _, ia := range ifs {
			if n, ok := ia.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok {
					ip = ip.Unmap()
					out = append(out, netip.PrefixFrom(ip, ip.BitLen()))
				}
			}
		}
	}
	return out
}

// MaxAnswer is how much of an answer's body a delivery reads.
const MaxAnswer = 1 << 10

// Client returns an HTTP client that connects only where p allows: each
// connection's address is checked as it is made (after the name was
// resolved, so a name that now resolves elsewhere is refused), through no
// proxy, following no redirect, within timeout for the whole exchange.
// Callers read at most MaxAnswer bytes of a body.
func (p *Policy) Client(timeout time.Duration) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("%w: %s", ErrRefused, address)
		}
		return p.Check(ap)
	}}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			addrs, err := p.resolve(ctx, host)
			if err != nil {
				return nil, err
			}
			var last error
			for _, a := range addrs {
				c, err := dialer.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
				if err == nil {
					return c, nil
				}
				last = err
			}
			return nil, last
		},
		TLSClientConfig:        &tls.Config{MinVersion: tls.VersionTLS12},
		MaxIdleConns:           256,
		MaxIdleConnsPerHost:    16, // many endpoints may share a host (a receiver service)
		IdleConnTimeout:        90 * time.Second,
		ResponseHeaderTimeout:  timeout,
		MaxResponseHeaderBytes: 16 << 10,
	}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}
