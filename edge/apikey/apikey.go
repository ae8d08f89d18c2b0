// Package apikey is the text form of an API key: making a key, reading
// its public id, hashing it as it is stored, and finding keys in text
// (to refuse them in URLs and redact them from logs). It needs nothing
// beyond the standard library, so that leaves such as package problem
// can redact keys without the key registry's ClickHouse.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/hex"
	"net/url"
	"strings"
)

// A key reads "edge_<id>_<secret>": prefix and id (8 characters, 40 random
// bits) are public and tell keys apart in listings; the secret holds 160
// random bits. Only the SHA-256 of the whole key is stored: the key is
// random, so a fast hash is as safe as a slow one, and checking it costs
// the request path well under a microsecond.
const (
	// Prefix starts every key and every key id.
	Prefix = "edge_"
	// IDLen is the length of a key's public id: Prefix and 8 base32
	// characters.
	IDLen     = len(Prefix) + idChars
	idChars   = 8  // base32 characters of the id
	secretLen = 32 // base32 characters of the secret
	// KeyLen is the length of every key.
	KeyLen = IDLen + 1 + secretLen
)

var b32 = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// Hash is the SHA-256 of a key.
type Hash [sha256.Size]byte

// Sum returns the hash of key.
func Sum(key string) Hash { return sha256.Sum256([]byte(key)) }

// String returns the hash in hex, as stored.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// ParseHash reads a stored hex hash.
func ParseHash(s string) (Hash, bool) {
	var h Hash
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != len(h) {
		return h, false
	}
	copy(h[:], b)
	return h, true
}

// New returns a new random key and its public id.
func New() (key, id string) {
	var buf [5 + 20]byte
	rand.Read(buf[:]) // never fails (crypto/rand panics on a broken source)
	id = Prefix + b32.EncodeToString(buf[:5])
	return id + "_" + b32.EncodeToString(buf[5:]), id
}

// ID returns the public id of a well-formed key, and false for anything
// else.
func ID(key string) (string, bool) {
	if len(key) != KeyLen || !strings.HasPrefix(key, Prefix) || key[IDLen] != '_' {
		return "", false
	}
	for i := len(Prefix); i < len(key); i++ {
		if c := key[i]; i != IDLen && !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			return "", false
		}
	}
	return key[:IDLen], true
}

// LooksLikeKey reports whether s holds something that looks like an API
// key: one of ours anywhere in it, so that a key pasted into a URL is
// refused and never logged.
func LooksLikeKey(s string) bool {
	for i := strings.Index(s, Prefix); i >= 0; {
		if len(s)-i >= KeyLen {
			if _, ok := ID(s[i : i+KeyLen]); ok {
				return true
			}
		}
		j := strings.Index(s[i+1:], Prefix)
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// Redact returns s with anything that looks like a key replaced by
// "[key]", for logs.
func Redact(s string) string {
	if !strings.Contains(s, Prefix) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, Prefix)
		if i < 0 || len(s)-i < KeyLen {
			break
		}
		if _, ok := ID(s[i : i+KeyLen]); ok {
			b.WriteString(s[:i] + "[key]")
			s = s[i+KeyLen:]
			continue
		}
		b.WriteString(s[:i+1])
		s = s[i+1:]
	}
	b.WriteString(s)
	return b.String()
}

// RedactEncoded is Redact for text that may hold a key percent-encoded
// (a path as a client sent it: edge%5F… is edge_… once decoded): when
// its decoded form holds a key, it returns that form with the key
// replaced; otherwise Redact's answer.
func RedactEncoded(s string) string {
	if strings.IndexByte(s, '%') >= 0 {
		if d, err := url.PathUnescape(s); err == nil {
			if r := Redact(d); r != d {
				return r
			}
		}
	}
	return Redact(s)
}
