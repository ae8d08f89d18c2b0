package apikey

import (
	"strings"
	"testing"
)

func TestNewIsWellFormedAndUnique(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		key, id := New()
		got, ok := ID(key)
		if !ok || got != id || len(key) != KeyLen || !strings.HasPrefix(key, id+"_") {
			t.Fatalf("key %q id %q: KeyID %q %v", key, id, got, ok)
		}
		if seen[key] {
			t.Fatal("a key repeated")
		}
		seen[key] = true
		if !LooksLikeKey("x" + key + "y") {
			t.Fatalf("%q not recognized inside text", key)
		}
	}
	for _, bad := range []string{"", "edge_", "edge_abcdefgh_short", strings.Repeat("a", KeyLen),
		"edge_ABCDEFGH_" + strings.Repeat("a", 32), "edge_abcdefgh-" + strings.Repeat("a", 32)} {
		if _, ok := ID(bad); ok {
			t.Errorf("%q accepted as a key", bad)
		}
		if LooksLikeKey(bad) {
			t.Errorf("%q looks like a key", bad)
		}
	}
}

func TestRedact(t *testing.T) {
	key, _ := New()
	for in, want := range map[string]string{
		"/api/v1/listings/chrome/" + key:     "/api/v1/listings/chrome/[key]",
		"a" + key + "b" + key:                "a[key]b[key]",
		"edge_ and edge_x " + key[:KeyLen-1]: "edge_ and edge_x " + key[:KeyLen-1],
		"plain":                              "plain",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRedactEncoded holds the problems' redaction to keys a client
// percent-encoded in its path.
func TestRedactEncoded(t *testing.T) {
	key, _ := New()
	enc := strings.ReplaceAll(key, "_", "%5F")
	for in, want := range map[string]string{
		"/api/v1/exports/2026-12-02/" + enc:           "/api/v1/exports/2026-12-02/[key]",
		"/api/v1/exports/latest/%65" + key[1:]:        "/api/v1/exports/latest/[key]",
		"/api/v1/exports/" + key + "/x":               "/api/v1/exports/[key]/x",
		"/a%2fb%zz" + key:                             "/a%2fb%zz[key]",
		"/api/v1/listings/chrome/no%20such%20listing": "/api/v1/listings/chrome/no%20such%20listing",
	} {
		if got := RedactEncoded(in); got != want {
			t.Errorf("RedactEncoded(%q) = %q, want %q", in, got, want)
		}
	}
}
