package answer

import (
	"strconv"
)

// Key is an answer's cache key: the route's pattern, the generation of
// what the answer derives from, then every field that changes the answer,
// each as "&name=value" with strings quoted, so that no value can spell
// another field. Equal keys mean equal answers. A Key is built in a
// caller's buffer (usually on its stack) and is only read while a Cache
// call runs.
//
// Every handler builds its keys with Key; listing queries with
// v1.QueryKey, which writes every field of the query.
type Key struct{ b []byte }

// NewKey starts the key of an answer of route (its path pattern, such as
// "/api/v1/listings") at generation gen, in buf.
func NewKey(buf []byte, route string, gen uint64) Key {
	b := append(append(buf[:0], route...), '@')
	return Key{appendUint(b, gen)}
}

// String returns the key's text, for tests and logs.
func (k Key) String() string { return string(k.b) }

func (k Key) name(name string) []byte {
	return append(append(append(k.b, '&'), name...), '=')
}

// Str adds a string field.
func (k Key) Str(name, v string) Key { return Key{strconv.AppendQuote(k.name(name), v)} }

// Text returns the key's bytes, valid while its buffer is (to hash a
// query into a cursor, say).
func (k Key) Text() []byte { return k.b }

// Int adds an integer field.
func (k Key) Int(name string, v int64) Key { return Key{strconv.AppendInt(k.name(name), v, 10)} }

// Uint adds an unsigned integer field.
func (k Key) Uint(name string, v uint64) Key { return Key{appendUint(k.name(name), v)} }

func appendUint(b []byte, v uint64) []byte { return strconv.AppendUint(b, v, 10) }

// Optional fields: nothing when unset, so that an unset field and a field
// set to a value differ.

// OptInt adds an integer field when v is set.
func OptInt[T ~int | ~int64 | ~int32 | ~uint8](k Key, name string, v *T) Key {
	if v == nil {
		return k
	}
	return k.Int(name, int64(*v))
}

// OptStr adds a string field when v is set.
func OptStr(k Key, name string, v *string) Key {
	if v == nil {
		return k
	}
	return k.Str(name, *v)
}

// OptBool adds a boolean field when v is set.
func OptBool(k Key, name string, v *bool) Key {
	if v == nil {
		return k
	}
	return Key{strconv.AppendBool(k.name(name), *v)}
}

// Flag adds a field when v is true.
func Flag(k Key, name string, v bool) Key {
	if !v {
		return k
	}
	return Key{append(k.name(name), '1')}
}

// OptFloat adds a float field when v is set.
func OptFloat(k Key, name string, v *float64) Key {
	if v == nil {
		return k
	}
	return Key{strconv.AppendFloat(k.name(name), *v, 'g', -1, 64)}
}
