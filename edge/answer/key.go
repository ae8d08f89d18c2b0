package answer

import (
	"strconv"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
)

// Key is an answer's cache key: the route's pattern, the generation of
// what the answer derives from, then every field that changes the answer,
// each as "&name=value" with strings quoted, so that no value can spell
// another field. Equal keys mean equal answers. A Key is built in a
// caller's buffer (usually on its stack) and is only read while a Cache
// call runs.
//
// Every handler builds its keys with Key, and listing queries with
// Key.Query, which writes every field of listq.Query: a test
// (TestQueryKeyCoversEveryField) fails when a field is added to the query
// and not to the key.
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

func optInt[T ~int | ~int64 | ~uint8](k Key, name string, v *T) Key {
	if v == nil {
		return k
	}
	return k.Int(name, int64(*v))
}

func optStr(k Key, name string, v *string) Key {
	if v == nil {
		return k
	}
	return k.Str(name, *v)
}

func optBool(k Key, name string, v *bool) Key {
	if v == nil {
		return k
	}
	return Key{strconv.AppendBool(k.name(name), *v)}
}

func flag(k Key, name string, v bool) Key {
	if !v {
		return k
	}
	return Key{append(k.name(name), '1')}
}

func optFloat(k Key, name string, v *float64) Key {
	if v == nil {
		return k
	}
	return Key{strconv.AppendFloat(k.name(name), *v, 'g', -1, 64)}
}

func optDay(k Key, name string, v *views.Day) Key {
	if v == nil {
		return k
	}
	return k.Int(name, int64(*v))
}

// Query adds every field of q that changes its answer: all but Deadline,
// the text search's time budget (an answer cut short by it is never
// cached).
func (k Key) Query(q *listq.Query) Key {
	k = optInt(k, "p", q.Store)
	if q.Q != "" {
		k = k.Str("q", q.Q)
	}
	k = optStr(k, "c", q.Category)
	k = optInt(k, "t", q.Kind)
	k = optBool(k, "f", q.Featured)
	k = optFloat(k, "i0", q.MinInstalls)
	k = optFloat(k, "i1", q.MaxInstalls)
	k = optBool(k, "rt", q.Rated)
	k = optFloat(k, "r0", q.MinRating)
	k = optFloat(k, "r1", q.MaxRating)
	k = optInt(k, "n0", q.MinRatingCount)
	k = optInt(k, "n1", q.MaxRatingCount)
	k = optStr(k, "v0", q.MinVersion)
	k = optStr(k, "v1", q.MaxVersion)
	k = optDay(k, "u0", q.UpdatedAfter)
	k = optDay(k, "u1", q.UpdatedBefore)
	k = optDay(k, "s0", q.FirstSeenAfter)
	k = optDay(k, "s1", q.FirstSeenBefore)
	k = flag(k, "id", q.IncludeDelisted)
	k = flag(k, "do", q.DelistedOnly)
	k = optDay(k, "d0", q.DelistedAfter)
	k = optDay(k, "d1", q.DelistedBefore)
	k = optInt(k, "mv", q.ManifestVersion)
	k = optStr(k, "pm", q.Permission)
	k = flag(k, "ha", q.HostAccessAll)
	k = optInt(k, "al", q.MinAccessLevel)
	k = k.Int("so", int64(q.Sort))
	k = flag(k, "as", q.Asc)
	k = k.Int("pg", int64(q.Page))
	k = k.Int("ps", int64(q.PageSize))
	k = flag(k, "no", q.NameOnly)
	k = optInt(k, "z0", q.MinSize)
	k = optInt(k, "z1", q.MaxSize)
	k = optStr(k, "tg", q.Topic)
	k = optInt(k, "ai", q.AlsoIn)
	return k
}
