package analytics

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2"
	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Config says how to reach ClickHouse.
type Config struct {
	// Addr is host:port of the native protocol, or several, comma
	// separated: the replicas of a cluster the edge may use, the first
	// preferred; when one cannot be reached, a connection goes to the next.
	Addr     string
	Database string // database holding the edge's tables
	// Cluster, when set, is the name of the ClickHouse cluster
	// (<remote_servers>) the database lives on: Migrate creates every table
	// on it, replicated and sharded, behind Distributed tables (see
	// clusterDDL), and queries run with the settings a Distributed read
	// and write need (clusterSettings).
	Cluster     string
	User        string        // user name
	Password    string        // password; never logged
	DialTimeout time.Duration // how long a connection attempt may take
	// IdleTimeout is how long a query may go without a byte from the
	// server before it fails (DefaultConfig's when 0). A running query
	// sends progress several times a second, so only a server that hangs
	// (or a network that drops everything) reaches it: a job's read then
	// fails and retries instead of waiting.
	IdleTimeout time.Duration
	MaxConns    int // open connections at most
	// PartSize is how many listings one read of a full load covers
	// (DefaultPartSize when 0); see SplitParts.
	PartSize int
	// MaxQueryMemory, when not 0, is the max_memory_usage setting (bytes)
	// of every query the edge sends: ClickHouse stops a query that would
	// need more. Loads split into parts keep well under it.
	MaxQueryMemory uint64
}

// DefaultConfig returns the settings used when none are given: a local
// server on the native port the project's own local ClickHouse uses.
func DefaultConfig() Config {
	return Config{
		Addr:        "127.0.0.1:19000",
		Database:    "edge",
		User:        "default",
		DialTimeout: 5 * time.Second,
		IdleTimeout: 30 * time.Second,
		MaxConns:    8,
		PartSize:    DefaultPartSize,
	}
}

// Open connects to the configured database and checks the connection.
func Open(ctx context.Context, cfg Config) (driver.Conn, error) {
	return open(ctx, cfg, cfg.Database)
}

func open(ctx context.Context, cfg Config, database string) (driver.Conn, error) {
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = DefaultConfig().DialTimeout
	}
	if cfg.MaxConns == 0 {
		cfg.MaxConns = DefaultConfig().MaxConns
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultConfig().IdleTimeout
	}
	// Reads use buffers of 128 KiB a column stream rather than the
	// driver's 1 MiB: a read of a load part opens some 30 streams, and
	// larger buffers would be most of its memory (TestLoadsInBoundedMemory
	// holds the bound).
	settings := clickhouse.Settings{"max_read_buffer_size": readBufferSize}
	if cfg.MaxQueryMemory > 0 {
		settings["max_memory_usage"] = int(cfg.MaxQueryMemory)
	}
	if cfg.Cluster != "" {
		for k, v := range clusterSettings {
			settings[k] = v
		}
	}
	conn, err := clickhouse.Open(&clickhouse.Options{
		Settings:         settings,
		Addr:             Addrs(cfg.Addr),
		ConnOpenStrategy: clickhouse.ConnOpenInOrder,
		Auth: clickhouse.Auth{
			Database: database,
			Username: cfg.User,
			Password: cfg.Password,
		},
		DialTimeout:     cfg.DialTimeout,
		DialContext:     dialContext(cfg.DialTimeout),
		ReadTimeout:     cfg.IdleTimeout,
		MaxOpenConns:    cfg.MaxConns,
		MaxIdleConns:    cfg.MaxConns,
		ConnMaxLifetime: time.Hour,
	})
	if err != nil {
		return nil, fmt.Errorf("open clickhouse %s: %w", cfg.Addr, err)
	}
	if err := conn.Ping(ctx); err != nil {
		conn.Close()
		return nil, fmt.Errorf("ping clickhouse %s database %q: %w", cfg.Addr, database, err)
	}
	if cfg.Cluster != "" {
		if err := checkClusterProfile(ctx, conn); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// clusterSettings are the settings of every query on a cluster: a write
// through a Distributed table returns once every shard has its rows, so
// that a read right after it sees them (a key made on one edge is found
// by the next request on another). The cluster's users also need
// distributed_product_mode = 'local' in their profile (RequiredProfile):
// the native protocol of 18.16 takes only numbers as a query's settings.
var clusterSettings = clickhouse.Settings{
	"insert_distributed_sync": 1,
}

// RequiredProfile is what the profile of the edge's ClickHouse user must
// set on a cluster: a read that joins or filters by a subquery of another
// Distributed table runs that subquery on each shard over its local
// table. Every table is sharded by listing (shardKeys), so a listing's
// rows meet on its shard.
const RequiredProfile = "<distributed_product_mode>local</distributed_product_mode>"

// checkClusterProfile fails when the user's profile does not set what a
// cluster needs (RequiredProfile).
func checkClusterProfile(ctx context.Context, conn driver.Conn) error {
	var mode string
	if err := conn.QueryRow(ctx, "SELECT value FROM system.settings WHERE name = 'distributed_product_mode'").Scan(&mode); err != nil {
		return fmt.Errorf("read distributed_product_mode: %w", err)
	}
	if mode != "local" {
		return fmt.Errorf("distributed_product_mode is %q: on a cluster the ClickHouse user's profile must set %s (docs/operations.md, A cluster)", mode, RequiredProfile)
	}
	return nil
}

// Addrs splits a Config.Addr into its addresses.
func Addrs(addr string) []string {
	var out []string
	for a := range strings.SplitSeq(addr, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// quoteIdent quotes a ClickHouse identifier such as a database name.
func quoteIdent(s string) string {
	out := make([]byte, 0, len(s)+2)
	out = append(out, '`')
	for i := 0; i < len(s); i++ {
		if s[i] == '`' || s[i] == '\\' {
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(append(out, '`'))
}

// readBufferSize is ClickHouse's max_read_buffer_size for the edge's reads.
const readBufferSize = 128 << 10
