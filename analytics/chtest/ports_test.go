package chtest

import (
	"net"
	"strconv"
	"testing"
)

// TestPortSetHandsOutDistinctPorts: a cluster's configuration names every
// server's port, so two servers must never be handed the same one (CI once
// failed with "two exactly the same ClickHouse instances").
func TestPortSetHandsOutDistinctPorts(t *testing.T) {
	var p portSet
	defer p.close()
	seen := make(map[int]bool)
	for range 300 {
		port, err := p.take()
		if err != nil {
			t.Fatal(err)
		}
		if seen[port] {
			t.Fatalf("port %d handed out twice", port)
		}
		seen[port] = true
	}
	// A released port can be listened on at once.
	var one int
	for port := range seen {
		one = port
		break
	}
	p.release(one)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(one)))
	if err != nil {
		t.Fatalf("listen on a released port: %v", err)
	}
	l.Close()
	if len(p.held) != len(seen)-1 {
		t.Fatalf("%d ports held, want %d", len(p.held), len(seen)-1)
	}
}
