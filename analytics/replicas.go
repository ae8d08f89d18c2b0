package analytics

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// A server added to a running cluster (a new replica of a shard) has
// none of the database's tables, and Migrate runs only the migrations
// not yet recorded, which the cluster's other servers recorded long ago:
// makeMissingTables gives it the tables, as the server that has them
// defines them. Once made, a replicated table fetches its shard's rows
// from the other replicas through ZooKeeper.

// clusterAddrs returns the native address of every server of
// cfg.Cluster, as the server conn reaches names them.
func clusterAddrs(ctx context.Context, conn driver.Conn, cfg Config) ([]string, error) {
	rows, err := conn.Query(ctx, "SELECT host_address, port FROM system.clusters WHERE cluster = ? ORDER BY shard_num, replica_num", cfg.Cluster)
	if err != nil {
		return nil, fmt.Errorf("list the cluster's servers: %w", err)
	}
	defer rows.Close()
	var addrs []string
	for rows.Next() {
		var host string
		var port uint16
		if err := rows.Scan(&host, &port); err != nil {
			return nil, fmt.Errorf("list the cluster's servers: %w", err)
		}
		addrs = append(addrs, net.JoinHostPort(host, strconv.Itoa(int(port))))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list the cluster's servers: %w", err)
	}
	return addrs, nil
}

// onEveryServer runs stmt, which adds column to table, on every server of
// cfg.Cluster where the table lacks it: what distributed DDL refuses to
// run (a Distributed table's ALTER). Every server must answer.
func onEveryServer(ctx context.Context, conn driver.Conn, cfg Config, table, column, stmt string) error {
	addrs, err := clusterAddrs(ctx, conn, cfg)
	if err != nil {
		return err
	}
	for _, addr := range addrs {
		one := cfg
		one.Addr = addr
		c, err := open(ctx, one, cfg.Database)
		if err != nil {
			return fmt.Errorf("server %s: %w", addr, err)
		}
		there, err := columnExists(ctx, c, table, column)
		if err == nil && !there {
			err = c.Exec(ctx, stmt)
		}
		c.Close()
		if err != nil {
			return fmt.Errorf("server %s: %w", addr, err)
		}
	}
	return nil
}

// appliedOnServers adds to applied the migrations recorded in the local
// schema_migrations table of every server of cfg.Cluster that answers.
func appliedOnServers(ctx context.Context, conn driver.Conn, cfg Config, applied map[int]bool) {
	addrs, err := clusterAddrs(ctx, conn, cfg)
	if err != nil {
		return // the read through the Distributed table stands alone
	}
	for _, addr := range addrs {
		one := cfg
		one.Addr = addr
		c, err := open(ctx, one, cfg.Database)
		if err != nil {
			continue
		}
		rows, err := c.Query(ctx, "SELECT DISTINCT version FROM schema_migrations"+localSuffix)
		if err == nil {
			for rows.Next() {
				var v uint32
				if rows.Scan(&v) == nil {
					applied[int(v)] = true
				}
			}
			rows.Close()
		}
		c.Close()
	}
}

// clusterServer is one server of the cluster as makeMissingTables sees
// it.
type clusterServer struct {
	addr   string
	conn   driver.Conn
	tables map[string]string // name -> engine
}

// makeMissingTables makes, on every server of cfg.Cluster that answers,
// the tables and views of cfg.Database it lacks, each as SHOW CREATE
// TABLE gives it on the server that has the most (a replicated table's
// macros kept as written, so that each server's own take their place):
// the tables of a storage engine first, then the Distributed tables over
// them, then the materialized views that write into them. A server that
// does not answer is logged and skipped; it gets its tables at the next
// Migrate.
func makeMissingTables(ctx context.Context, conn driver.Conn, cfg Config, log *slog.Logger) error {
	addrs, err := clusterAddrs(ctx, conn, cfg)
	if err != nil {
		return err
	}
	var servers []*clusterServer
	defer func() {
		for _, s := range servers {
			s.conn.Close()
		}
	}()
	for _, addr := range addrs {
		one := cfg
		one.Addr = addr
		c, err := open(ctx, one, "default")
		if err == nil {
			s := &clusterServer{addr: addr, conn: c}
			servers = append(servers, s)
			if s.tables, err = tablesOf(ctx, c, cfg.Database); err == nil {
				continue
			}
		}
		log.WarnContext(ctx, "migrate: a server of the cluster does not answer; it gets the tables it lacks at the next migrate", "server", addr, "err", err)
	}
	servers = slices.DeleteFunc(servers, func(s *clusterServer) bool {
		if s.tables == nil {
			s.conn.Close()
			return true
		}
		return false
	})
	if len(servers) < 2 {
		return nil
	}
	ref := slices.MaxFunc(servers, func(a, b *clusterServer) int { return cmp.Compare(len(a.tables), len(b.tables)) })
	names := make([]string, 0, len(ref.tables))
	for name := range ref.tables {
		names = append(names, name)
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(makeOrder(ref.tables[a]), makeOrder(ref.tables[b])), strings.Compare(a, b))
	})
	for _, s := range servers {
		if len(s.tables) == len(ref.tables) {
			continue
		}
		if err := s.conn.Exec(ctx, "CREATE DATABASE IF NOT EXISTS "+quoteIdent(cfg.Database)); err != nil {
			return fmt.Errorf("create database %s on %s: %w", cfg.Database, s.addr, err)
		}
		for _, name := range names {
			if _, ok := s.tables[name]; ok {
				continue
			}
			var def string
			if err := ref.conn.QueryRow(ctx, "SHOW CREATE TABLE "+quoteIdent(cfg.Database)+"."+quoteIdent(name)).Scan(&def); err != nil {
				return fmt.Errorf("read the definition of %s on %s: %w", name, ref.addr, err)
			}
			stmt, err := ifNotExists(def)
			if err != nil {
				return fmt.Errorf("table %s: %w", name, err)
			}
			if err := s.conn.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("make table %s on %s: %w", name, s.addr, err)
			}
			log.InfoContext(ctx, "migrate: made a table a server of the cluster lacked", "server", s.addr, "table", name, "as_on", ref.addr)
		}
	}
	return nil
}

// tablesOf returns the tables and views of database db on a server, with
// their engines.
func tablesOf(ctx context.Context, conn driver.Conn, db string) (map[string]string, error) {
	rows, err := conn.Query(ctx, "SELECT name, engine FROM system.tables WHERE database = ?", db)
	if err != nil {
		return nil, fmt.Errorf("list the tables: %w", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var name, engine string
		if err := rows.Scan(&name, &engine); err != nil {
			return nil, fmt.Errorf("list the tables: %w", err)
		}
		out[name] = engine
	}
	return out, rows.Err()
}

// makeOrder is when a table of engine is made among the others: what it
// reads or writes through must exist first.
func makeOrder(engine string) int {
	switch engine {
	case "Distributed":
		return 1
	case "MaterializedView":
		return 2
	}
	return 0
}

// ifNotExists returns a CREATE statement as SHOW CREATE TABLE gives it,
// made idempotent.
func ifNotExists(def string) (string, error) {
	for _, kind := range []string{"CREATE TABLE ", "CREATE MATERIALIZED VIEW ", "CREATE VIEW "} {
		if rest, ok := strings.CutPrefix(def, kind); ok {
			return kind + "IF NOT EXISTS " + rest, nil
		}
	}
	return "", fmt.Errorf("not a definition to make again: %.60q", def)
}
