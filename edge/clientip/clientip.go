// Package clientip says which address a request comes from: the
// connection's, or, behind trusted proxies, the nearest hop of
// X-Forwarded-For that no trusted proxy claims.
package clientip

import (
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/gofiber/fiber/v2"
)

// Prefixes is a set of address ranges, such as trusted proxies.
type Prefixes []netip.Prefix

// Contains reports whether a is in one of the ranges.
func (ps Prefixes) Contains(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range ps {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// ParsePrefixes reads a comma-separated list of addresses and CIDR ranges.
func ParsePrefixes(s string) (Prefixes, error) {
	var out Prefixes
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if !strings.Contains(f, "/") {
			a, err := netip.ParseAddr(f)
			if err != nil {
				return nil, err
			}
			out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
			continue
		}
		p, err := netip.ParsePrefix(f)
		if err != nil {
			return nil, err
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// Proxies say which connections may name the client and in which header.
type Proxies struct {
	// Trusted are the proxies whose header names the client; a header from
	// any other connection is ignored.
	Trusted Prefixes
	// Forwarded reads RFC 7239's Forwarded header instead of
	// X-Forwarded-For. Read only the header the trusted proxies write: a
	// client can send the other one, forged, and the proxies pass it on.
	Forwarded bool
	// IPv6Prefix is how many leading bits of an IPv6 address name one
	// caller (0: 64). A host gets a /64 as easily as one address, so every
	// limit counts the /64, not the address.
	IPv6Prefix int
}

// DefaultIPv6Prefix is the IPv6 prefix length one caller is counted by.
const DefaultIPv6Prefix = 64

// Subject returns who a limit counts for an address: an IPv4 address as
// it is, an IPv6 address as its prefix (the /64 by default, as the zero
// address of that prefix). Every per-address limit, throttle and count
// keys on it.
func (p Proxies) Subject(a netip.Addr) netip.Addr {
	a = a.Unmap()
	if !a.Is6() {
		return a
	}
	bits := p.IPv6Prefix
	if bits <= 0 || bits > 128 {
		bits = DefaultIPv6Prefix
	}
	pre, err := a.WithZone("").Prefix(bits)
	if err != nil {
		return a
	}
	return pre.Addr()
}

// Caller returns the subject of the request's client: Subject of Of.
func (p Proxies) Caller(c *fiber.Ctx) netip.Addr { return p.Subject(p.Of(c)) }

// ParseHeader reads the name of the header trusted proxies write:
// "x-forwarded-for" (or empty) or "forwarded", in any case.
func ParseHeader(name string) (forwarded bool, err error) {
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "", "x-forwarded-for":
		return false, nil
	case "forwarded":
		return true, nil
	}
	return false, fmt.Errorf("%q: use x-forwarded-for or forwarded", name)
}

// Of returns the caller's address: the connection's, or, when the
// connection comes from a trusted proxy, the first untrusted hop of the
// proxies' header counted from the right (the nearest hop a trusted proxy
// saw), across every line of the header in order (a proxy that adds a
// line of its own, as HAProxy's option forwardfor does, adds it last). A
// malformed hop stops the walk: nothing left of it is trusted.
func (p Proxies) Of(c *fiber.Ctx) netip.Addr {
	remote, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	remote = remote.Unmap()
	if len(p.Trusted) == 0 || !p.Trusted.Contains(remote) {
		return remote
	}
	name := fiber.HeaderXForwardedFor
	if p.Forwarded {
		name = "Forwarded"
	}
	var hops []string
	for _, line := range c.Request().Header.PeekAll(name) {
		for hop := range strings.SplitSeq(string(line), ",") {
			hops = append(hops, hop)
		}
	}
	for i := len(hops) - 1; i >= 0; i-- {
		hop := hops[i]
		if p.Forwarded {
			hop = forwardedFor(hop)
		}
		a, err := netip.ParseAddr(strings.TrimSpace(hop))
		if err != nil {
			break // a malformed hop: trust nothing further left
		}
		if a = a.Unmap(); !p.Trusted.Contains(a) {
			return a
		}
		remote = a
	}
	return remote
}

// Of is Proxies{Trusted: trusted}.Of: X-Forwarded-For from trusted.
func Of(c *fiber.Ctx, trusted Prefixes) netip.Addr { return Proxies{Trusted: trusted}.Of(c) }

// forwardedFor returns the address of the for= parameter of one element of
// a Forwarded header (RFC 7239: for=192.0.2.60;proto=http, or
// for="[2001:db8::1]:4711"), without port and brackets; "" when it names
// none (obfuscated identifiers such as for=_hidden and for=unknown are not
// addresses, and stop the walk).
func forwardedFor(elem string) string {
	for pair := range strings.SplitSeq(elem, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(pair), "=")
		if !ok || !strings.EqualFold(k, "for") {
			continue
		}
		v = strings.Trim(v, `"`)
		if strings.HasPrefix(v, "[") {
			if end := strings.IndexByte(v, ']'); end > 0 {
				return v[1:end]
			}
			return ""
		}
		if host, _, err := net.SplitHostPort(v); err == nil {
			return host
		}
		return v
	}
	return ""
}
