// Package accept reads a request's Accept field (RFC 9110 section
// 12.5.1): the weight it gives each media type the edge can answer in, so
// that a route with two forms (a page or JSON, CSV or JSON) chooses by
// the client's preference, not by a substring of the field.
//
// The rules, for a media type the edge offers (lower-case type/subtype):
//
//   - Each element is a media range with optional parameters and an
//     optional weight (q, 0 to 1, at most three decimals; 1 when absent);
//     type, subtype and parameter names are case-insensitive. An element
//     that is not one (no slash, "*/html", a bad token or qvalue, an
//     unclosed quote) is ignored. Parameters after q (accept-ext) are
//     ignored.
//   - A range applies to the type when it names it (text/html), its type
//     (text/*) or any (*/*); one with parameters applies only when each
//     is charset=utf-8, the charset of every text the edge sends, and is
//     then more specific than the same range without.
//   - The most specific range that applies gives the type its weight (the
//     first listed among equally specific ones); a type no range applies
//     to weighs 0. q=0 means not acceptable.
//   - A field with no valid element (absent, empty or all malformed) says
//     nothing: every type weighs 1.
//
// Nothing here allocates: a page route reads it on every request.
package accept

import "github.com/edge-stats/edge/edge/headerfield"

// Quality returns the weight, in thousandths (0 to 1000), that the Accept
// field value header gives mediaType, a lower-case "type/subtype".
func Quality(header []byte, mediaType string) int {
	q, _ := weigh(header, mediaType, "")
	return q
}

// Prefers reports whether header accepts a and weighs it above b: the
// client asked for a rather than b. A tie is not a preference.
func Prefers(header []byte, a, b string) bool {
	qa, qb := weigh(header, a, b)
	return qa > 0 && qa > qb
}

// weigh returns the weights header gives a and b ("": none), reading it
// once.
func weigh(header []byte, a, b string) (qa, qb int) {
	ta, sa := split(a)
	tb, sb := split(b)
	specA, specB, valid := -1, -1, false
	for i := 0; i < len(header); {
		end := elementEnd(header, i)
		r, ok := parse(header[i:end])
		i = end + 1
		if !ok {
			continue
		}
		valid = true
		if spec := r.applies(ta, sa); spec > specA {
			qa, specA = r.q, spec
		}
		if b != "" {
			if spec := r.applies(tb, sb); spec > specB {
				qb, specB = r.q, spec
			}
		}
	}
	if !valid {
		return 1000, 1000
	}
	return qa, qb
}

// split returns the type and subtype of "type/subtype".
func split(mediaType string) (string, string) {
	for i := 0; i < len(mediaType); i++ {
		if mediaType[i] == '/' {
			return mediaType[:i], mediaType[i+1:]
		}
	}
	return mediaType, ""
}

// elementEnd returns the index of the comma that ends the element that
// starts at i (or len(h)): a comma within a quoted string ends nothing.
func elementEnd(h []byte, i int) int {
	quoted := false
	for ; i < len(h); i++ {
		switch b := h[i]; {
		case quoted && b == '\\':
			i++
		case b == '"':
			quoted = !quoted
		case b == ',' && !quoted:
			return i
		}
	}
	return len(h)
}

// mediaRange is one valid element of the field.
type mediaRange struct {
	typ, sub []byte // "*" for a wildcard
	q        int    // thousandths
	params   bool   // it has media-type parameters (each charset=utf-8)
	foreign  bool   // it has a parameter that no answer of the edge has
}

// applies returns how specifically r names typ/sub (2 for the type
// itself, 1 for its type's wildcard, 0 for */*, each doubled and one more
// with parameters), or -1 when it does not apply.
func (r mediaRange) applies(typ, sub string) int {
	if r.foreign {
		return -1
	}
	level := -1
	switch {
	case isStar(r.typ):
		level = 0
	case !equalFold(r.typ, typ):
	case isStar(r.sub):
		level = 1
	case equalFold(r.sub, sub):
		level = 2
	}
	if level < 0 {
		return -1
	}
	if r.params {
		return 2*level + 1
	}
	return 2 * level
}

// isStar reports whether t is the wildcard "*".
func isStar(t []byte) bool { return len(t) == 1 && t[0] == '*' }

// parse reads one element: a media range, its parameters, and its
// weight; ok is false for an element that is not one.
func parse(e []byte) (r mediaRange, ok bool) {
	e = headerfield.TrimOWS(e)
	i := 0
	for i < len(e) && e[i] != ';' && e[i] != ' ' && e[i] != '\t' {
		i++
	}
	rng := e[:i]
	slash := -1
	for j, b := range rng {
		if b == '/' {
			slash = j
			break
		}
	}
	if slash < 0 {
		return r, false
	}
	r.typ, r.sub, r.q = rng[:slash], rng[slash+1:], 1000
	if !headerfield.IsToken(r.typ) || !headerfield.IsToken(r.sub) || (isStar(r.typ) && !isStar(r.sub)) {
		return r, false
	}
	weighed := false
	for i < len(e) {
		// OWS ";" OWS [ name "=" ( token / quoted-string ) ]
		i = skipOWS(e, i)
		if i == len(e) || e[i] != ';' {
			return r, false
		}
		i = skipOWS(e, i+1)
		if i == len(e) || e[i] == ';' {
			continue // an empty parameter
		}
		var name, value []byte
		var quoted bool
		if name, value, quoted, i, ok = param(e, i); !ok {
			return r, false
		}
		switch {
		case weighed:
			// What follows the weight is accept-ext: checked for its
			// form, and ignored.
		case len(name) == 1 && (name[0] == 'q' || name[0] == 'Q'):
			if r.q, ok = headerfield.QValue(value); !ok || quoted {
				return r, false
			}
			weighed = true
		case equalFold(name, "charset") && equalFold(value, "utf-8"):
			r.params = true
		default:
			r.foreign = true
		}
	}
	return r, true
}

// param reads the parameter at e[i:], name=value with the value a token
// or a quoted string (returned without its quotes, its escapes kept), and
// returns where it ends.
func param(e []byte, i int) (name, value []byte, quoted bool, end int, ok bool) {
	start := i
	for i < len(e) && headerfield.IsTokenChar(e[i]) {
		i++
	}
	name = e[start:i]
	if len(name) == 0 || i == len(e) || e[i] != '=' {
		return nil, nil, false, 0, false
	}
	i++
	if i < len(e) && e[i] == '"' {
		start = i + 1
		for i++; i < len(e) && e[i] != '"'; i++ {
			if e[i] == '\\' {
				i++
			}
		}
		if i >= len(e) {
			return nil, nil, false, 0, false // no closing quote
		}
		return name, e[start:i], true, i + 1, true
	}
	start = i
	for i < len(e) && headerfield.IsTokenChar(e[i]) {
		i++
	}
	if i == start {
		return nil, nil, false, 0, false
	}
	return name, e[start:i], false, i, true
}

// skipOWS returns the index of the first byte of e from i on that is not
// a space or a tab.
func skipOWS(e []byte, i int) int {
	for i < len(e) && (e[i] == ' ' || e[i] == '\t') {
		i++
	}
	return i
}

// equalFold reports whether b and s are equal under ASCII case folding.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		x, y := b[i], s[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}
