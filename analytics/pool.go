package analytics

import (
	"context"
	"sync"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Lazy opens its connection on first use and keeps it; a failed open is
// tried again on the next call. It lets the edge start, and serve from
// memory, while ClickHouse is unreachable. It is safe for concurrent use.
type Lazy struct {
	cfg  Config
	mu   sync.Mutex
	conn driver.Conn
}

// NewLazy returns a Lazy for cfg; nothing is dialled yet.
func NewLazy(cfg Config) *Lazy { return &Lazy{cfg: cfg} }

// Conn returns the shared connection pool, opening it if needed.
func (l *Lazy) Conn(ctx context.Context) (driver.Conn, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn != nil {
		return l.conn, nil
	}
	c, err := Open(ctx, l.cfg)
	if err != nil {
		return nil, err
	}
	l.conn = c
	return c, nil
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
