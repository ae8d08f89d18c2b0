package transport

import (
	"io"
	"net"
	"testing"
	"time"
)

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (server, client *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return s.(*net.TCPConn), c.(*net.TCPConn)
}

// TestLingerClose: a lingering connection ends its sending side at once
// (the client reads EOF after the answer) and reads what the client still
// sends, so the client's writes succeed; its place is freed when the
// client closes. With no place left a connection is closed at once.
func TestLingerClose(t *testing.T) {
	sem := make(chan struct{}, 1)
	s, c := tcpPair(t)
	if err := lingerClose(s, sem); err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("the client read %d bytes, %v; want EOF", n, err)
	}
	chunk := make([]byte, 1<<20)
	for i := range 16 { // 16 MiB, far more than the socket buffers hold
		if _, err := c.Write(chunk); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if len(sem) != 1 {
		t.Fatal("a lingering connection holds no place")
	}
	// The one place is taken: another connection is closed at once.
	s2, c2 := tcpPair(t)
	if err := lingerClose(s2, sem); err != nil {
		t.Fatal(err)
	}
	c2.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c2.Read(make([]byte, 1)); err == nil {
		t.Fatal("a connection past the places still reads")
	}
	if _, err := s2.Write([]byte("x")); err == nil {
		t.Fatal("a connection past the places was not closed")
	}
	c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for len(sem) != 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(sem) != 0 {
		t.Fatal("the place was not freed when the client closed")
	}
}
