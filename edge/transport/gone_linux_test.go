//go:build linux

package transport

import (
	"testing"
	"time"
)

// TestConnGone: a connection whose client is there, has sent more, has
// closed or has reset is taken to be gone only in the last two, and a
// peek takes nothing of what it sent.
func TestConnGone(t *testing.T) {
	for _, c := range []struct {
		name string
		do   func(t *testing.T, client interface{ Write([]byte) (int, error) }, close func())
		gone bool
	}{
		{"there", func(*testing.T, interface{ Write([]byte) (int, error) }, func()) {}, false},
		{"sent its next request", func(t *testing.T, w interface{ Write([]byte) (int, error) }, _ func()) {
			if _, err := w.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
				t.Fatal(err)
			}
		}, false},
		{"closed", func(_ *testing.T, _ interface{ Write([]byte) (int, error) }, close func()) { close() }, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			server, client := tcpPair(t)
			defer server.Close()
			c.do(t, client, func() { client.Close() })
			var got bool
			for range 100 { // the client's end crosses loopback at once, or nearly
				if got = connGone(server); got == c.gone {
					break
				}
				time.Sleep(time.Millisecond)
			}
			if got != c.gone {
				t.Fatalf("gone %v, want %v", got, c.gone)
			}
			if c.name == "sent its next request" {
				b := make([]byte, 64)
				n, err := server.Read(b)
				if err != nil || string(b[:n]) != "GET / HTTP/1.1\r\n\r\n" {
					t.Fatalf("after a peek the server reads %q, %v", b[:n], err)
				}
			}
			client.Close()
		})
	}
}
