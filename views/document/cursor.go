package document

import (
	"encoding/base64"
	"encoding/json"
)

// MaxCursor bounds a decoded cursor, so a crafted one costs nothing.
const MaxCursor = 4096

// EncodeCursor returns v as a cursor: base64url-encoded JSON. Cursors are
// opaque to callers; each list checks its own fields on the way back.
func EncodeCursor(v any) *string {
	b, _ := json.Marshal(v)
	s := base64.RawURLEncoding.EncodeToString(b)
	return &s
}

// DecodeCursor reads a cursor EncodeCursor made; ok is false for anything
// else, and for anything longer than MaxCursor bytes once decoded.
func DecodeCursor[T any](s string) (v T, ok bool) {
	if len(s) > base64.RawURLEncoding.EncodedLen(MaxCursor) {
		return v, false
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) > MaxCursor || json.Unmarshal(b, &v) != nil {
		return v, false
	}
	return v, true
}
