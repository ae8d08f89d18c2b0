package faultproxy

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// server answers each chunk it reads with 10,000 bytes (a large result).
func server(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 1024)
				for {
					if _, err := c.Read(buf); err != nil {
						return
					}
					if _, err := c.Write(bytes.Repeat([]byte("r"), 10_000)); err != nil {
						return
					}
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// ask sends a query on c and reads the answer until it has 10,000 bytes,
// an error, or the deadline.
func ask(c net.Conn, wait time.Duration) (int, error) {
	c.SetDeadline(time.Now().Add(wait))
	if _, err := c.Write([]byte("q")); err != nil {
		return 0, err
	}
	got := 0
	buf := make([]byte, 4096)
	for got < 10_000 {
		n, err := c.Read(buf)
		got += n
		if err != nil {
			return got, err
		}
	}
	return got, nil
}

func TestFaults(t *testing.T) {
	p, err := Start(server(t))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	dial := func() net.Conn {
		t.Helper()
		c, err := net.Dial("tcp", p.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	isReset := func(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

	held := dial()
	if n, err := ask(held, 5*time.Second); n != 10_000 || err != nil {
		t.Fatalf("none: %d bytes, %v", n, err)
	}

	p.Set(Latency, 300*time.Millisecond, 0)
	start := time.Now()
	if n, err := ask(held, 5*time.Second); n != 10_000 || err != nil {
		t.Fatalf("latency: %d bytes, %v", n, err)
	}
	if waited := time.Since(start); waited < 300*time.Millisecond {
		t.Fatalf("latency: answered after %v, before the delay", waited)
	}

	p.Set(Blackhole, 0, 0)
	for _, c := range []net.Conn{held, dial()} {
		if n, err := ask(c, 300*time.Millisecond); n != 0 || !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("blackhole: %d bytes, %v; want nothing until the deadline", n, err)
		}
	}

	p.Set(Cut, 0, 2500)
	if n, err := ask(dial(), 5*time.Second); n != 2500 || !isReset(err) {
		t.Fatalf("cut: %d bytes, %v; want 2,500 then a reset", n, err)
	}

	p.Set(None, 0, 0)
	held = dial()
	if n, err := ask(held, 5*time.Second); n != 10_000 || err != nil {
		t.Fatalf("none again: %d bytes, %v", n, err)
	}
	p.Set(Reset, 0, 0)
	if _, err := ask(held, 5*time.Second); !isReset(err) && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EPIPE) {
		t.Fatalf("reset, a held connection: %v", err)
	}
	// A new connection is reset at once: the reset may even reach the
	// client before its connect returns (Go reads the socket's error once
	// it is writable), which is the same refusal.
	if c, err := net.Dial("tcp", p.Addr()); err != nil {
		if !isReset(err) {
			t.Fatalf("reset, a new connection: dial: %v", err)
		}
	} else {
		t.Cleanup(func() { c.Close() })
		if _, err := ask(c, 5*time.Second); !isReset(err) && !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("reset, a new connection: %v", err)
		}
	}

	p.Set(None, 0, 0)
	held = dial()
	if n, err := ask(held, 5*time.Second); n != 10_000 || err != nil {
		t.Fatalf("none before drop: %d bytes, %v", n, err)
	}
	p.Set(Drop, 0, 0)
	if n, err := ask(held, 5*time.Second); n != 0 || err == nil {
		t.Fatalf("drop, a held connection: %d bytes, %v", n, err)
	}
	if n, err := ask(dial(), 5*time.Second); n != 0 || err == nil {
		t.Fatalf("drop, a new connection: %d bytes, %v", n, err)
	}
}
