package analytics

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// blackhole listens on loopback and accepts connections that it never
// answers: a server that hangs (a paused process).
func blackhole(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	return ln.Addr().String()
}

// TestReadHonoursItsBudget: against a server that accepts and never
// answers, whose handshake would hold a caller for the whole dial timeout,
// every Read returns at its own context's end with ErrBudget,
// while the pool's one open is still under way: no caller waits behind
// another's dial, nor for the dial at all.
func TestReadHonoursItsBudget(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Addr, cfg.DialTimeout = blackhole(t), time.Minute
	l := NewLazy(cfg)
	defer l.Close()
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Duration(20+10*i)*time.Millisecond)
			defer cancel()
			_, errs[i] = Read(ctx, l, func(ctx context.Context, conn driver.Conn) (int, error) {
				return 1, conn.Ping(ctx)
			})
		})
	}
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, ErrBudget) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("read %d: %v, want ErrBudget", i, err)
		}
	}
	l.mu.Lock()
	opening := l.opening != nil
	l.mu.Unlock()
	if !opening {
		t.Error("the open ended before the reads: they did not return at their budgets")
	}
	// Conn itself returns at its caller's end too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := l.Conn(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Conn with its context ended: %v", err)
	}
}

// TestReadReturnsTheResult: a read that completes returns its value and
// error as they are.
func TestReadReturnsTheResult(t *testing.T) {
	l := NewLazy(DefaultConfig())
	l.conn = fakeConn{} // an open pool: no dial
	want := errors.New("no such table")
	v, err := Read(context.Background(), l, func(context.Context, driver.Conn) (string, error) { return "rows", want })
	if v != "rows" || err != want {
		t.Fatalf("Read = %q, %v", v, err)
	}
}

// fakeConn is an open pool that is never used.
type fakeConn struct{ driver.Conn }
