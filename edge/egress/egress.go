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
	// Local makes the rule match, as well as Prefix, every address this
	// host has at the time of a check (Policy.Local), on Port: a rule of
	// Deny for a service of this host (Own).
	Local bool
}

func (r Rule) matches(ap netip.AddrPort) bool {
	return r.Prefix.Contains(ap.Addr()) && (r.Port == 0 || r.Port == ap.Port())
}

func (r Rule) String() string {
	if r.Local {
		return fmt.Sprintf("%s and this host's addresses on port %d", r.Prefix, r.Port)
	}
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
	// Local, when set, has this host's addresses as they are now: each is
	// a host of the edge's own (as Hosts), so that an address the host
	// gains after start (a new IPv6 privacy address, a DHCP lease, a
	// moved virtual IP) is one too. cmd/edge sets it; nil: Hosts alone.
	Local *LocalCache
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

// AddressError is the refusal of one address: Error says why, for the
// operator's log; Public is what a caller is told, the same for every
// address refused, so that a refusal does not tell a caller which
// addresses are this service's own hosts and services.
type AddressError struct {
	Addr   netip.AddrPort
	Reason string
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("%v: %s %s", ErrRefused, e.Addr, e.Reason)
}

// Unwrap returns ErrRefused.
func (e *AddressError) Unwrap() error { return ErrRefused }

// PublicRefusal is what a caller is told of a refused address, whatever
// the reason: what to give instead, what is refused, and where the
// operator reads why (never which allow entry would admit it, nor that
// the address is one of the service's own).
const PublicRefusal = "this address is not allowed for webhooks: give the URL of a receiver of your own at a public address " +
	"(loopback, private, link-local and reserved addresses are refused unless this service's operator admits them, " +
	"and this service's own always; its log says why this one was)"

// Public returns what a caller may be told of err: PublicRefusal when an
// address was refused (the reason is for the log: Reason), err's text
// otherwise.
func Public(err error) string {
	var ae *AddressError
	if errors.As(err, &ae) {
		return PublicRefusal
	}
	return err.Error()
}

// Reason returns the specific reason of an address refusal in err, for
// the log ("" when err is no such refusal): the address and why, never a
// URL (whose path or query may hold a key).
func Reason(err error) string {
	var ae *AddressError
	if errors.As(err, &ae) {
		return ae.Error()
	}
	return ""
}

// Check returns an error wrapping ErrRefused (an *AddressError) when ap
// may not be reached: one of the edge's own services (Deny), or an
// address that is not public and not allowed. A zone is stripped before
// every check. With Local set, every address this host has now (re-read
// at most every LocalCache's interval) is a host of the edge's own, and
// Deny's rules for this host's services (Rule.Local) match each.
func (p *Policy) Check(ap netip.AddrPort) error {
	a := ap.Addr().WithZone("").Unmap()
	ap = netip.AddrPortFrom(a, ap.Port())
	local := p.localNow()
	for _, r := range p.Deny {
		if r.matches(ap) || r.Local && containsAddr(local, a) && (r.Port == 0 || r.Port == ap.Port()) {
			return &AddressError{ap, "is one of this service's own addresses"}
		}
	}
	if p.ownHost(a) || containsAddr(local, a) {
		if p.namesExactly(ap) {
			return nil
		}
		return &AddressError{ap, fmt.Sprintf("is on a host of this service's own (its ClickHouse, its ZooKeeper or the edge itself), "+
			"which a webhook reaches only on a port the allow list names with this very address (EDGE_WEBHOOK_ALLOW=%s)", ap)}
	}
	for _, r := range p.Allow {
		if r.matches(ap) {
			return nil
		}
	}
	if why := Why(a); why != "" {
		return &AddressError{ap, "is " + why}
	}
	return nil
}

// localNow returns this host's addresses now when p.Local is set (nil
// otherwise).
func (p *Policy) localNow() []netip.Prefix {
	if p.Local == nil {
		return nil
	}
	return p.Local.Prefixes()
}

func containsAddr(ps []netip.Prefix, a netip.Addr) bool {
	return slices.ContainsFunc(ps, func(p netip.Prefix) bool { return p.Contains(a) })
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
	if strings.TrimSpace(raw) == "" {
		return nil, fmt.Errorf("%w: give the URL deliveries are sent to, such as https://hooks.example.com/edge", ErrRefused)
	}
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
		return nil, fmt.Errorf("%w: use an https URL, such as https://hooks.example.com/edge", ErrRefused)
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
					if err = p.checkConn(c); err == nil {
						return c, nil
					}
					c.Close()
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
