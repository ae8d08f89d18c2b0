package queryonce

import (
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

// argsOf parses raw as fasthttp parses a request's query.
func argsOf(raw string) func() *fasthttp.Args {
	return func() *fasthttp.Args {
		var a fasthttp.Args
		a.Parse(raw)
		return &a
	}
}

// TestRepeated checks the names found twice, plain, escaped and many.
func TestRepeated(t *testing.T) {
	many := strings.Repeat("a", 0)
	for i := range 20 {
		many += "p" + string(rune('a'+i)) + "=1&"
	}
	for _, c := range []struct {
		raw, name string
		repeated  bool
	}{
		{"", "", false},
		{"q=vpn", "", false},
		{"store=chrome&q=vpn", "", false},
		{"store=chrome&store=apple&q=vpn&q=Other", "store", true},
		{"limit=2&limit=3", "limit", true},
		{"q=&q=vpn", "q", true},
		{"kind=a,b&store=chrome", "", false},
		{"&&q=a&&", "", false},
		{"=a&=b", "", false},
		{"%71=a&q=b", "q", true},
		{"my+key=a&my%20key=b", "my key", true},
		{"a&a", "a", true},
		{"a=1&b=2&a", "a", true},
		{many + "q=1", "", false},
		{many + "pc=2", "pc", true},
	} {
		name, repeated := Repeated([]byte(c.raw), argsOf(c.raw))
		if name != c.name || repeated != c.repeated {
			t.Errorf("%q: %q %v, want %q %v", c.raw, name, repeated, c.name, c.repeated)
		}
	}
}

// FuzzRepeated checks Repeated against fasthttp's parsed arguments:
// it finds a name twice exactly when they hold one twice, and that name.
func FuzzRepeated(f *testing.F) {
	for _, s := range []string{"a=1&a=2", "a=1&b=2", "%61=1&a", "+=1&%20", "x&&x", strings.Repeat("k=v&", 20), "=&=", "a=%zz&a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		name, repeated := Repeated([]byte(raw), argsOf(raw))
		want, wantRepeated := parsed(argsOf(raw)())
		if repeated != wantRepeated || (repeated && name != want) {
			// The first name repeated may differ between the two reads
			// only in which pair is met first; both must be repeated.
			if repeated != wantRepeated || !twice(argsOf(raw)(), name) {
				t.Fatalf("%q: %q %v, fasthttp's arguments: %q %v", raw, name, repeated, want, wantRepeated)
			}
		}
	})
}

// twice reports whether args hold name more than once.
func twice(args *fasthttp.Args, name string) bool {
	n := 0
	args.VisitAll(func(k, _ []byte) {
		if string(k) == name {
			n++
		}
	})
	return n > 1
}

// BenchmarkRepeated is the check of every request on a query of the
// cached hot path, as a dashboard sends it: no allocation, no parse.
func BenchmarkRepeated(b *testing.B) {
	raw := []byte("store=chrome&sort=growth7d&order=desc&limit=50")
	args := argsOf(string(raw))
	b.ReportAllocs()
	for b.Loop() {
		if _, twice := Repeated(raw, args); twice {
			b.Fatal("repeated")
		}
	}
}
