// Package clientip says which address a request comes from: the
// connection's, or, behind trusted proxies, the nearest hop of
// X-Forwarded-For that no trusted proxy claims.
package clientip

import (
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

// Of returns the caller's address: the connection's, or, when the
// connection comes from a trusted proxy, the first untrusted hop of
// X-Forwarded-For counted from the right (the nearest hop a trusted proxy
// saw). A forged header from an untrusted connection is ignored.
func Of(c *fiber.Ctx, trusted Prefixes) netip.Addr {
	remote, _ := netip.AddrFromSlice(c.Context().RemoteIP())
	remote = remote.Unmap()
	if len(trusted) == 0 || !trusted.Contains(remote) {
		return remote
	}
	hops := strings.Split(c.Get(fiber.HeaderXForwardedFor), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break // a malformed hop: trust nothing further left
		}
		if a = a.Unmap(); !trusted.Contains(a) {
			return a
		}
		remote = a
	}
	return remote
}
