// This file holds the addresses of the edge's own services and of this
// host, as the policy refuses them.

package egress

import (
	"context"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

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
		prefixes, local := ownHosts(ctx, r, []string{hp})
		for _, p := range prefixes {
			for _, port := range all {
				out = append(out, Rule{Prefix: p, Port: port})
			}
		}
		if local {
			for _, port := range all {
				out = append(out, Rule{Local: true, Port: port})
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
// name this host later, so it counts as this host's. These are the
// addresses of now: a Policy's Local adds those the host gains later.
func OwnHosts(ctx context.Context, r Resolver, hostPorts []string) []netip.Prefix {
	prefixes, _ := ownHosts(ctx, r, hostPorts)
	return prefixes
}

// ownHosts is OwnHosts, and whether one of the services is this host's.
func ownHosts(ctx context.Context, r Resolver, hostPorts []string) ([]netip.Prefix, bool) {
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
	return slices.Compact(prefixes), isLocal
}

// LocalCache holds Local's answer for up to a while, so that a check
// sees the addresses this host has now without listing its interfaces
// at every connection. Its methods are safe for concurrent use.
type LocalCache struct {
	every time.Duration
	mu    sync.Mutex
	at    time.Time
	last  []netip.Prefix
}

// NewLocalCache returns a LocalCache that reads Local again when its
// answer is older than every (about a second is what cmd/edge uses).
func NewLocalCache(every time.Duration) *LocalCache {
	return &LocalCache{every: every}
}

// Prefixes returns this host's addresses (Local), as read at most the
// cache's interval ago. The slice is shared: callers do not change it.
func (c *LocalCache) Prefixes() []netip.Prefix {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.last == nil || time.Since(c.at) >= c.every {
		c.last, c.at = Local(), time.Now()
	}
	return c.last
}

// checkConn refuses a connection that reached this host although its
// address was not taken for one of this host's: one whose remote address
// is loopback or unspecified, or equals its local address (Linux gives a
// connection to an address of its own that address as its source), unless
// the allow list names that address and port exactly (Policy.Hosts). It
// catches an address the host gained since Local was last read. A policy
// that knows no host of its own (neither Hosts nor Local) checks nothing
// here, as Check takes none for this host's.
func (p *Policy) checkConn(c net.Conn) error {
	if len(p.Hosts) == 0 && p.Local == nil {
		return nil
	}
	la, lok := c.LocalAddr().(*net.TCPAddr)
	ra, rok := c.RemoteAddr().(*net.TCPAddr)
	if !lok || !rok {
		return nil
	}
	l, r := la.AddrPort(), ra.AddrPort()
	lip, rip := l.Addr().WithZone("").Unmap(), r.Addr().WithZone("").Unmap()
	r = netip.AddrPortFrom(rip, r.Port())
	if (rip == lip || rip.IsLoopback() || rip.IsUnspecified()) && !p.namesExactly(r) {
		return &AddressError{r, "is an address of this host's (the connection's source is " + lip.String() + "), which a webhook reaches only on a port the allow list names with this very address"}
	}
	return nil
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
