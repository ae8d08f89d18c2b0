// Package jsonw appends JSON values byte for byte as encoding/json
// writes them (its string escaping, HTML escaping included, its float
// format, time.Time's RFC 3339 form), for the documents an uncached page
// writes by the hundred: written by hand, a page costs no reflection, no
// allocation per time and no second pass over what a Marshaler returned.
// Tests and fuzz targets hold every function to encoding/json's output;
// Plain, to the MCP SDK's (no HTML escaping), for the tool server's fast
// path.
package jsonw

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// Appender is a value that appends its own JSON encoding, the same bytes
// as encoding/json.Marshal would give.
type Appender interface {
	AppendJSON(b []byte) []byte
}

const hex = "0123456789abcdef"

// safe holds the ASCII bytes that encoding/json writes as they are (with
// HTML escaping, its default): not control characters, quotes,
// backslashes, <, > or &.
var safe = func() (s [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		s[b] = b != '"' && b != '\\' && b != '<' && b != '>' && b != '&'
	}
	return s
}()

// String appends s as a JSON string, escaped as encoding/json escapes it:
// \" \\ \b \f \n \r \t, other control characters and <, >, & as \u00XX,
// U+2028 and U+2029 as \u2028 and \u2029, and each byte of invalid UTF-8
// as \ufffd.
func String(b []byte, s string) []byte { return appendString(b, s, &safe, true) }

// Plain appends s as a JSON string without HTML escaping, as the MCP
// SDK's encoder writes its messages: \" \\ \n \r \t, every other control
// character as \u00XX (\b and \f too), U+2028 and U+2029 as \u2028 and
// \u2029, and each byte of invalid UTF-8 as \ufffd; <, > and & as they are.
func Plain(b []byte, s string) []byte { return appendString(b, s, &plainSafe, false) }

// plainSafe is safe without HTML escaping.
var plainSafe = func() (s [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		s[b] = b != '"' && b != '\\'
	}
	return s
}()

// appendString appends s as a JSON string: the ASCII bytes safe marks as
// they are, \b and \f short when shortBF, else as String says.
func appendString(b []byte, s string, safe *[utf8.RuneSelf]bool, shortBF bool) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if safe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '\\', c == '"':
				b = append(b, '\\', c)
			case c == '\b' && shortBF:
				b = append(b, '\\', 'b')
			case c == '\f' && shortBF:
				b = append(b, '\\', 'f')
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// Float appends f as encoding/json writes a float64: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from
// 1e21. NaN and infinities, which encoding/json refuses (failing the
// whole document), are written null.
func Float(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Null(b)
	}
	format := byte('f')
	if a := math.Abs(f); a != 0 && (a < 1e-6 || a >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 is written e-9.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// Int appends n.
func Int(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// Uint appends n.
func Uint(b []byte, n uint64) []byte { return strconv.AppendUint(b, n, 10) }

// Bool appends true or false.
func Bool(b []byte, v bool) []byte { return strconv.AppendBool(b, v) }

// Time appends t as time.Time.MarshalJSON does: RFC 3339 with the
// fraction of a second when it has one, quoted. t's year must lie in
// 0–9999 (MarshalJSON refuses others).
func Time(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}

// Null appends null.
func Null(b []byte) []byte { return append(b, "null"...) }

// Key appends a member's name and its colon, after a comma unless the
// member is its object's first (b ends in '{'). name must need no
// escaping.
func Key(b []byte, name string) []byte {
	if n := len(b); n > 0 && b[n-1] != '{' {
		b = append(b, ',')
	}
	b = append(b, '"')
	b = append(b, name...)
	return append(b, '"', ':')
}

// StringPtr appends *s, or null when s is nil.
func StringPtr(b []byte, s *string) []byte {
	if s == nil {
		return Null(b)
	}
	return String(b, *s)
}

// IntPtr appends *n, or null when n is nil.
func IntPtr[N ~int | ~int64 | ~int32](b []byte, n *N) []byte {
	if n == nil {
		return Null(b)
	}
	return Int(b, int64(*n))
}

// UintPtr appends *n, or null when n is nil.
func UintPtr[N ~uint8 | ~uint32 | ~uint64](b []byte, n *N) []byte {
	if n == nil {
		return Null(b)
	}
	return Uint(b, uint64(*n))
}

// FloatPtr appends *f, or null when f is nil.
func FloatPtr(b []byte, f *float64) []byte {
	if f == nil {
		return Null(b)
	}
	return Float(b, *f)
}

// TimePtr appends *t, or null when t is nil.
func TimePtr(b []byte, t *time.Time) []byte {
	if t == nil {
		return Null(b)
	}
	return Time(b, *t)
}

// Slice appends s as an array, each element by each, or null when s is
// nil (as encoding/json writes a nil slice).
func Slice[T any](b []byte, s []T, each func(b []byte, v *T) []byte) []byte {
	if s == nil {
		return Null(b)
	}
	b = append(b, '[')
	for i := range s {
		if i > 0 {
			b = append(b, ',')
		}
		b = each(b, &s[i])
	}
	return append(b, ']')
}

// Strings appends ss as an array of strings, or null when ss is nil.
func Strings(b []byte, ss []string) []byte {
	return Slice(b, ss, func(b []byte, s *string) []byte { return String(b, *s) })
}
