package main

import (
	"io"
	"testing"
)

// TestPublicURLFollowsTheListenAddress: an edge told no public address
// links to where it listens (a new user's `make run` on another port
// copies the pages' DuckDB queries and reaches it), a wildcard as
// loopback; one told an address keeps it.
func TestPublicURLFollowsTheListenAddress(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "http://127.0.0.1:8080"},
		{[]string{"--listen", "127.0.0.1:18180"}, "http://127.0.0.1:18180"},
		{[]string{"--listen", ":9090"}, "http://127.0.0.1:9090"},
		{[]string{"--listen", "0.0.0.0:9090"}, "http://127.0.0.1:9090"},
		{[]string{"--listen", "[::]:9090"}, "http://127.0.0.1:9090"},
		{[]string{"--listen", "[::1]:9090"}, "http://[::1]:9090"},
		{[]string{"--listen", "127.0.0.1:18180", "--public-url", "https://stats.example.com"}, "https://stats.example.com"},
	} {
		c, err := parseServe(tc.args, io.Discard)
		if err != nil {
			t.Fatal(tc.args, err)
		}
		if c.srv.PublicURL != tc.want {
			t.Errorf("%v: public address %q, want %q", tc.args, c.srv.PublicURL, tc.want)
		}
	}
}
