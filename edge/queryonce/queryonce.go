// Package queryonce finds a query parameter given more than once. Every
// parameter of the edge's routes takes one value (several values of one,
// such as kind=a,b, go in it comma-separated), and the handlers read the
// first while a page's caption and links could read another: a request
// that names one twice is refused before any handler reads it.
package queryonce

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// scanMax is the most parameters compared pairwise on the raw query;
// past it, or when a name is escaped, the parsed arguments are read.
const scanMax = 16

// Repeated returns the first parameter name the query string raw gives
// more than once, as fasthttp reads names (percent-decoded, '+' a
// space; empty names are not parameters), and true; or false. args are
// raw's parsed arguments, parsed only when a name is escaped or there are
// many: a plain query of a few parameters is compared as sent, with no
// allocation.
func Repeated(raw []byte, args func() *fasthttp.Args) (string, bool) {
	if bytes.IndexByte(raw, '&') < 0 {
		return "", false // one parameter at most
	}
	var names [scanMax][]byte
	n := 0
	for rest := raw; len(rest) > 0; {
		seg := rest
		if i := bytes.IndexByte(rest, '&'); i >= 0 {
			seg, rest = rest[:i], rest[i+1:]
		} else {
			rest = nil
		}
		name := seg
		if i := bytes.IndexByte(seg, '='); i >= 0 {
			name = seg[:i]
		}
		if len(name) == 0 {
			continue
		}
		if n == scanMax || bytes.IndexByte(name, '%') >= 0 || bytes.IndexByte(name, '+') >= 0 {
			return parsed(args())
		}
		for _, seen := range names[:n] {
			if bytes.Equal(seen, name) {
				return string(name), true
			}
		}
		names[n] = name
		n++
	}
	return "", false
}

// parsed returns the first name args hold twice.
func parsed(args *fasthttp.Args) (name string, repeated bool) {
	seen := make(map[string]struct{}, args.Len())
	args.VisitAll(func(k, _ []byte) {
		if repeated || len(k) == 0 {
			return
		}
		if _, ok := seen[string(k)]; ok {
			name, repeated = string(k), true
			return
		}
		seen[string(k)] = struct{}{}
	})
	return name, repeated
}
