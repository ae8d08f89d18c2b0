package clientip

import (
	"net"
	"net/netip"
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
