package clientip

import (
	"net"
	"net/netip"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
)

func TestParsePrefixes(t *testing.T) {
	ps, err := ParsePrefixes(" 10.0.0.0/8, 192.0.2.7 ,::ffff:198.51.100.1, 2001:db8::/32,")
	if err != nil || len(ps) != 4 {
		t.Fatalf("%v %v", ps, err)
	}
	for _, c := range []struct {
		addr string
		in   bool
	}{{"10.1.2.3", true}, {"192.0.2.7", true}, {"192.0.2.8", false}, {"198.51.100.1", true},
		{"::ffff:10.0.0.1", true}, {"2001:db8::1", true}, {"2001:db9::1", false}} {
		if got := ps.Contains(netip.MustParseAddr(c.addr)); got != c.in {
			t.Errorf("Contains(%s) = %v", c.addr, got)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "nope", "1.2.3"} {
		if _, err := ParsePrefixes(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestOf checks whose address a request is: the connection's unless it
// comes from a trusted proxy, then the nearest hop of X-Forwarded-For that
// no trusted proxy claims; a malformed hop stops the walk.
func TestOf(t *testing.T) {
	trusted, _ := ParsePrefixes("127.0.0.1, 10.0.0.0/8")
	app := fiber.New()
	for _, c := range []struct {
		remote, xff string
		trusted     Prefixes
		want        string
	}{
		{"203.0.113.9", "198.51.100.1", trusted, "203.0.113.9"},          // untrusted connection: the header is ignored
		{"127.0.0.1", "", trusted, "127.0.0.1"},                          // trusted, no header
		{"127.0.0.1", "198.51.100.1", trusted, "198.51.100.1"},           // one hop
		{"127.0.0.1", "6.6.6.6, 198.51.100.1", trusted, "198.51.100.1"},  // a forged hop on the left is not reached
		{"127.0.0.1", "198.51.100.1, 10.1.1.1", trusted, "198.51.100.1"}, // trusted hops are skipped
		{"127.0.0.1", "198.51.100.1, junk", trusted, "127.0.0.1"},        // a malformed hop: trust nothing beyond
		{"127.0.0.1", "198.51.100.1", nil, "127.0.0.1"},                  // no trusted proxies
	} {
		var rc fasthttp.RequestCtx
		rc.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP(c.remote), Port: 1}, nil)
		if c.xff != "" {
			rc.Request.Header.Set("X-Forwarded-For", c.xff)
		}
		ctx := app.AcquireCtx(&rc)
		if got := Of(ctx, c.trusted); got.String() != c.want {
			t.Errorf("remote %s, X-Forwarded-For %q: %s, want %s", c.remote, c.xff, got, c.want)
		}
		app.ReleaseCtx(ctx)
	}
}

// TestOfEveryLineAndForwarded: every line of X-Forwarded-For is read in
// order, the proxy's own line last; with Forwarded, its for= parameters
// (quoted, bracketed IPv6, with ports) are read and X-Forwarded-For is
// ignored.
func TestOfEveryLineAndForwarded(t *testing.T) {
	trusted, _ := ParsePrefixes("127.0.0.1, 10.0.0.0/8")
	app := fiber.New()
	for _, c := range []struct {
		forwarded bool
		headers   [][2]string
		want      string
	}{
		{false, [][2]string{{"X-Forwarded-For", "6.6.6.6"}, {"X-Forwarded-For", "198.51.100.7"}}, "198.51.100.7"},
		{false, [][2]string{{"X-Forwarded-For", "6.6.6.6, 198.51.100.7"}, {"X-Forwarded-For", "10.0.0.2"}}, "198.51.100.7"},
		{false, [][2]string{{"Forwarded", "for=6.6.6.6"}, {"X-Forwarded-For", "198.51.100.7"}}, "198.51.100.7"},
		{true, [][2]string{{"Forwarded", "for=198.51.100.8;proto=https"}, {"X-Forwarded-For", "6.6.6.6"}}, "198.51.100.8"},
		{true, [][2]string{{"Forwarded", `for=6.6.6.6`}, {"Forwarded", `for="[2001:db8::9]:4711", for=10.0.0.3`}}, "2001:db8::9"},
		{true, [][2]string{{"Forwarded", `For="198.51.100.9:80"`}}, "198.51.100.9"},
		{true, [][2]string{{"Forwarded", `for=6.6.6.6, for=_hidden`}}, "127.0.0.1"}, // an obfuscated hop: trust nothing beyond
		{true, [][2]string{{"Forwarded", `proto=http`}}, "127.0.0.1"},
	} {
		var rc fasthttp.RequestCtx
		rc.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, nil)
		for _, h := range c.headers {
			rc.Request.Header.Add(h[0], h[1])
		}
		ctx := app.AcquireCtx(&rc)
		if got := (Proxies{Trusted: trusted, Forwarded: c.forwarded}).Of(ctx); got.String() != c.want {
			t.Errorf("forwarded=%v %v: %s, want %s", c.forwarded, c.headers, got, c.want)
		}
		app.ReleaseCtx(ctx)
	}
	for name, want := range map[string]bool{"": false, "X-Forwarded-For": false, "Forwarded": true} {
		if got, err := ParseHeader(name); err != nil || got != want {
			t.Errorf("ParseHeader(%q) = %v, %v", name, got, err)
		}
	}
	if _, err := ParseHeader("X-Real-IP"); err == nil {
		t.Error("an unknown header was accepted")
	}
}

func TestSubjectGroupsIPv6(t *testing.T) {
	for _, c := range []struct {
		bits     int
		in, want string
	}{
		{0, "192.0.2.7", "192.0.2.7"},
		{0, "::ffff:192.0.2.7", "192.0.2.7"},
		{0, "2001:db8:1:2:aaaa::1", "2001:db8:1:2::"},
		{0, "2001:db8:1:2:ffff:ffff:ffff:ffff", "2001:db8:1:2::"},
		{48, "2001:db8:1:2::1", "2001:db8:1::"},
		{128, "2001:db8::5", "2001:db8::5"},
	} {
		if got := (Proxies{IPv6Prefix: c.bits}).Subject(netip.MustParseAddr(c.in)); got.String() != c.want {
			t.Errorf("/%d %s: %s, want %s", c.bits, c.in, got, c.want)
		}
	}
}

// FuzzClientHeaders: no X-Forwarded-For or Forwarded lines make Of panic,
// and the address it returns is the connection's or one a trusted proxy
// wrote: never a hop left of an untrusted one (which anyone can forge),
// and never a trusted proxy's own address when an untrusted hop follows.
func FuzzClientHeaders(f *testing.F) {
	for _, s := range [][2]string{{"198.51.100.1", ""}, {"6.6.6.6, 198.51.100.1", "10.0.0.1"}, {"junk, 10.1.1.1", ""},
		{`for="[2001:db8::1]:4711";proto=https`, `for=_hidden, for=192.0.2.60`}, {"::ffff:10.0.0.1", "1.2.3.4:80"},
		{",,,", "for=unknown"}, {"2001:db8::1%eth0", "fe80::1"}} {
		f.Add(s[0], s[1], false)
		f.Add(s[0], s[1], true)
	}
	trusted, _ := ParsePrefixes("127.0.0.1, 10.0.0.0/8")
	app := fiber.New()
	f.Fuzz(func(t *testing.T, line1, line2 string, forwarded bool) {
		var rc fasthttp.RequestCtx
		rc.Init(&fasthttp.Request{}, &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}, nil)
		name := "X-Forwarded-For"
		if forwarded {
			name = "Forwarded"
		}
		for _, l := range []string{line1, line2} {
			rc.Request.Header.Add(name, l)
		}
		ctx := app.AcquireCtx(&rc)
		defer app.ReleaseCtx(ctx)
		p := Proxies{Trusted: trusted, Forwarded: forwarded}
		got := p.Of(ctx)
		if !got.IsValid() {
			t.Fatalf("%q %q: no address", line1, line2)
		}
		if got != netip.MustParseAddr("127.0.0.1") && !trusted.Contains(got) {
			// An untrusted hop: every hop right of it, as written, is trusted.
			var hops []string
			for _, v := range rc.Request.Header.PeekAll(name) {
				hops = append(hops, strings.Split(string(v), ",")...)
			}
			found := false
			for i := len(hops) - 1; i >= 0; i-- {
				h := hops[i]
				if forwarded {
					h = forwardedFor(h)
				}
				a, err := netip.ParseAddr(strings.TrimSpace(h))
				if err != nil {
					t.Fatalf("%q %q: %s returned past a malformed hop", line1, line2, got)
				}
				if a.Unmap() == got {
					found = true
					break
				}
				if !trusted.Contains(a.Unmap()) {
					t.Fatalf("%q %q: %s returned past the untrusted hop %s", line1, line2, got, a)
				}
			}
			if !found {
				t.Fatalf("%q %q: %s is in no hop", line1, line2, got)
			}
		}
		_ = p.Subject(got)
	})
}
