package coding

import "github.com/edge-stats/edge/edge/headerfield"

// Set is a set of codings, identity included or not.
type Set uint8

// Has reports whether c is in the set.
func (s Set) Has(c Coding) bool { return s&(1<<c) != 0 }

// Of returns the set of the given codings.
func Of(cs ...Coding) Set {
	var s Set
	for _, c := range cs {
		s |= 1 << c
	}
	return s
}

// All is every coding the edge makes; IdentityOnly is an answer too small
// to be worth compressing.
var (
	All          = Of(Identity, Brotli, Zstd, Gzip)
	IdentityOnly = Of(Identity)
)

// Order is the server's order of preference among compressed codings a
// client weighs alike (identity always comes last).
type Order [3]Coding

// The two orders: for an answer compressed at the best level ahead of
// requests, the smallest bytes first (brotli, zstd, gzip); for one
// compressed while a request waits, the cheapest first: zstd's and gzip's
// fast levels cost about 3 µs a kilobyte, brotli's some 17, for 10 to 20%
// fewer bytes (bench/README.md, Compression).
var (
	SmallFirst = Order{Brotli, Zstd, Gzip}
	FastFirst  = Order{Zstd, Gzip, Brotli}
)

// Choose returns the coding of offered that a request's Accept-Encoding
// (header; present says whether the request had one) prefers, by RFC 9110
// section 12.5.3, or ok false when it accepts none of them (406):
//
//   - No Accept-Encoding: identity. (Any coding is acceptable then, and
//     identity is the one every client can read.)
//   - An empty one: identity only.
//   - Each coding takes its own weight (q, 0 to 1 in thousandths; 1 when
//     absent); "x-gzip" is gzip; a coding listed twice takes its first
//     weight; an element whose weight is not a valid qvalue, or that has
//     a parameter other than q, is ignored.
//   - A coding not listed takes the weight of "*" if listed; identity,
//     when neither it nor "*" is listed, is acceptable at a weight below
//     every other (RFC 9110: identity is acceptable unless excluded).
//   - q=0 means not acceptable. Among the acceptable, the highest weight
//     wins; equal weights go to the server's order (order, then
//     identity).
//
// Choose does not allocate: it runs on every request for an answer that
// has variants.
func Choose(header []byte, present bool, offered Set, order Order) (c Coding, ok bool) {
	if !present {
		return Identity, offered.Has(Identity)
	}
	const unset = -1
	var q [Count]int
	for i := range q {
		q[i] = unset
	}
	star := unset
	for i := 0; i < len(header); {
		// One element: up to the next comma.
		end := i
		for end < len(header) && header[end] != ',' {
			end++
		}
		name, weight, valid := element(header[i:end])
		i = end + 1
		if !valid {
			continue
		}
		switch {
		case name == "*":
			if star == unset {
				star = weight
			}
		default:
			if k, known := lookup(name); known && q[k] == unset {
				q[k] = weight
			}
		}
	}
	best, bestQ := Identity, 0
	for _, k := range [...]Coding{order[0], order[1], order[2], Identity} {
		if !offered.Has(k) {
			continue
		}
		w := q[k]
		if w == unset {
			w = star
		}
		if w == unset && k == Identity {
			w = 0
			if bestQ == 0 {
				return Identity, true // acceptable, below every listed weight
			}
		}
		if w > bestQ {
			best, bestQ = k, w
		}
	}
	return best, bestQ > 0
}

// lookup maps a coding's token, already lower-cased, to its Coding.
func lookup(name string) (Coding, bool) {
	switch name {
	case "gzip", "x-gzip":
		return Gzip, true
	case "br":
		return Brotli, true
	case "zstd":
		return Zstd, true
	case "identity":
		return Identity, true
	}
	return 0, false
}

// element parses one element of Accept-Encoding: a coding, then optional
// parameters, of which only q is valid. It returns the coding's token
// lower-cased ("?" for one the edge does not know), its weight in thousandths, and whether the element counts.
func element(e []byte) (name string, weight int, valid bool) {
	e = headerfield.TrimOWS(e)
	semi := len(e)
	for j, b := range e {
		if b == ';' {
			semi = j
			break
		}
	}
	name, valid = token(headerfield.TrimOWS(e[:semi]))
	if !valid {
		return "", 0, false
	}
	weight = 1000
	rest := e[semi:]
	seenQ := false
	for len(rest) > 0 { // each ";" parameter
		rest = rest[1:]
		end := len(rest)
		for j, b := range rest {
			if b == ';' {
				end = j
				break
			}
		}
		p := headerfield.TrimOWS(rest[:end])
		rest = rest[end:]
		if len(p) < 2 || (p[0] != 'q' && p[0] != 'Q') || p[1] != '=' || seenQ {
			return "", 0, false
		}
		w, ok := headerfield.QValue(p[2:])
		if !ok {
			return "", 0, false
		}
		weight, seenQ = w, true
	}
	return name, weight, true
}

// token returns the lower-cased coding token when it is one the edge
// knows or "*", and a placeholder otherwise: unknown codings are valid
// elements that change nothing. An empty or malformed token is invalid.
func token(t []byte) (string, bool) {
	if len(t) == 0 || len(t) > 16 {
		return "?", len(t) > 16 && headerfield.IsToken(t) // a long token is valid, and unknown
	}
	if !headerfield.IsToken(t) {
		return "", false
	}
	var lower [16]byte
	for i, b := range t {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		lower[i] = b
	}
	// The conversion in a switch's comparison does not allocate.
	switch string(lower[:len(t)]) {
	case "gzip":
		return "gzip", true
	case "x-gzip":
		return "x-gzip", true
	case "br":
		return "br", true
	case "zstd":
		return "zstd", true
	case "identity":
		return "identity", true
	case "*":
		return "*", true
	}
	return "?", true
}
