package analytics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Lazy opens its connection pool on first use and keeps it; a failed open
// is tried again on the next call. It lets the edge start, and serve from
// memory, while ClickHouse is unreachable. It is safe for concurrent use.
//
// No caller waits on a lock behind another's dial: one open runs at a
// time, in the background, bounded by the configured DialTimeout, and
// each caller waits for it only as long as its own context allows. Every
// connection the pool dials follows its caller's context while it
// connects (see Read for the handshake that follows).
type Lazy struct {
	cfg Config

	mu      sync.Mutex
	conn    driver.Conn
	opening chan struct{} // closed when the open under way ends; nil when none is
	openErr error         // the last open's error, for its waiters
}

// NewLazy returns a Lazy for cfg; nothing is dialled yet.
func NewLazy(cfg Config) *Lazy { return &Lazy{cfg: cfg} }

// Conn returns the shared connection pool, opening it if needed. It
// returns when the pool is open, when the open fails, or when ctx ends,
// whichever comes first.
func (l *Lazy) Conn(ctx context.Context) (driver.Conn, error) {
	l.mu.Lock()
	if l.conn != nil {
		c := l.conn
		l.mu.Unlock()
		return c, nil
	}
	wait := l.opening
	if wait == nil {
		wait = make(chan struct{})
		l.opening = wait
		go l.open(wait)
	}
	l.mu.Unlock()
	select {
	case <-wait:
	case <-ctx.Done():
		return nil, fmt.Errorf("open clickhouse %s: %w", l.cfg.Addr, context.Cause(ctx))
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		return l.conn, nil
	}
	return nil, l.openErr
}

// open opens the pool under the dial timeout, with no caller's context:
// callers that gave up do not cancel it for those still waiting.
func (l *Lazy) open(done chan struct{}) {
	timeout := l.cfg.DialTimeout
	if timeout <= 0 {
		timeout = DefaultConfig().DialTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	c, err := Open(ctx, l.cfg)
	l.mu.Lock()
	l.conn, l.openErr, l.opening = c, err, nil
	l.mu.Unlock()
	close(done)
}

// PartSize returns how many listings one read of a full load covers.
func (l *Lazy) PartSize() int { return l.cfg.PartSize }

// Close closes the connection pool if it was opened.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return nil
	}
	err := l.conn.Close()
	l.conn = nil
	return err
}

// ErrBudget is what a Read that ran out of its context's time returns
// (wrapping the context's error).
var ErrBudget = errors.New("clickhouse read: out of time")

// Read runs read on l's pool and returns its result, or ErrBudget (which
// wraps context.DeadlineExceeded) as soon as ctx ends, whatever the
// driver is doing: a connection's TCP dial follows ctx, but its handshake
// has a deadline of its own (clickhouse-go), and a server that accepts
// and never answers would hold a caller past its budget. The read then
// goes on in the background with the ended ctx, which stops it as soon as
// the driver looks at it, and its result is dropped. A per-request read
// is thus answered or refused within its budget, plus scheduling.
func Read[T any](ctx context.Context, l *Lazy, read func(ctx context.Context, conn driver.Conn) (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		var r result
		conn, err := l.Conn(ctx)
		if err == nil {
			r.v, r.err = read(ctx, conn)
		} else {
			r.err = err
		}
		done <- r
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, fmt.Errorf("%w: %w", ErrBudget, context.Cause(ctx))
	}
}

// dialContext connects to addr as ctx allows, within timeout at most (the
// driver's DialTimeout, which it also applies to the handshake).
func dialContext(timeout time.Duration) func(ctx context.Context, addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	return func(ctx context.Context, addr string) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", addr)
	}
}
