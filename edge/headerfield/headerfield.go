// Package headerfield reads the pieces every negotiated HTTP header field
// is made of (RFC 9110 section 5.6): tokens, weights and optional white
// space, for the Accept and Accept-Encoding readers (packages accept and
// coding). It allocates nothing.
package headerfield

// IsToken reports whether t is a token: one or more token characters
// (RFC 9110 section 5.6.2).
func IsToken(t []byte) bool {
	for _, b := range t {
		if !IsTokenChar(b) {
			return false
		}
	}
	return len(t) > 0
}

// IsTokenChar reports whether b is a token character.
func IsTokenChar(b byte) bool {
	switch {
	case 'a' <= b && b <= 'z', 'A' <= b && b <= 'Z', '0' <= b && b <= '9':
		return true
	}
	switch b {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// QValue parses a weight, "0" to "1" with at most three decimals (RFC
// 9110 section 12.4.2), into thousandths.
func QValue(v []byte) (int, bool) {
	if len(v) == 0 || len(v) > 5 || (v[0] != '0' && v[0] != '1') {
		return 0, false
	}
	w := int(v[0]-'0') * 1000
	if len(v) == 1 {
		return w, true
	}
	if v[1] != '.' {
		return 0, false
	}
	scale := 100
	for _, d := range v[2:] {
		if d < '0' || d > '9' {
			return 0, false
		}
		w += int(d-'0') * scale
		scale /= 10
	}
	if w > 1000 {
		return 0, false
	}
	return w, true
}

// TrimOWS removes optional white space (spaces and tabs) at both ends.
func TrimOWS(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t') {
		b = b[1:]
	}
	for len(b) > 0 && (b[len(b)-1] == ' ' || b[len(b)-1] == '\t') {
		b = b[:len(b)-1]
	}
	return b
}
