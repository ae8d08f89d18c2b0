package analytics

import (
	"context"
	"embed"
	"fmt"
	"io/fs"
	"log/slog"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migration is one versioned step of the schema, embedded in the binary.
type Migration struct {
	Version    int      // from the file name's leading number
	Name       string   // the file name
	Statements []string // run in order
}

// Migrations returns the embedded migrations in version order.
func Migrations() ([]Migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list migrations: %w", err)
	}
	var out []Migration
	for _, path := range names {
		name := strings.TrimPrefix(path, "migrations/")
		num, _, ok := strings.Cut(name, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive version number and '_'", name)
		}
		body, err := migrationFiles.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("read migration %s: %w", name, err)
		}
		out = append(out, Migration{Version: v, Name: name, Statements: splitStatements(string(body))})
	}
	slices.SortFunc(out, func(a, b Migration) int { return a.Version - b.Version })
	for i := 1; i < len(out); i++ {
		if out[i].Version == out[i-1].Version {
			return nil, fmt.Errorf("migrations %s and %s share version %d", out[i-1].Name, out[i].Name, out[i].Version)
		}
	}
	return out, nil
}

// splitStatements splits SQL text on semicolons that end a line, dropping
// comment lines. Migration files keep string literals free of ";\n".
func splitStatements(sql string) []string {
	var b strings.Builder
	for line := range strings.Lines(sql) {
		if strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		b.WriteString(line)
	}
	var out []string
	for stmt := range strings.SplitSeq(b.String(), ";\n") {
		stmt = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(stmt), ";"))
		if stmt != "" {
			out = append(out, stmt)
		}
	}
	return out
}

// forDeployment returns the statements that apply stmt, written for one
// server, where cfg says the database lives: stmt itself on one server,
// its cluster form (clusterDDL) on a cluster.
func forDeployment(cfg Config, version int, stmt string) ([]string, error) {
	if cfg.Cluster == "" {
		return []string{stmt}, nil
	}
	return clusterDDL(stmt, cfg.Cluster, cfg.Database, version)
}

// migrationTimeout is the longest one statement of a migration may take.
const migrationTimeout = 2 * time.Hour

// Migrate creates the database if needed and applies every migration not
// yet recorded in schema_migrations. Every statement is idempotent (IF NOT
// EXISTS), so a migration cut short is simply run again; running Migrate
// twice leaves the schema unchanged. On a cluster, it then makes on each
// server the tables it lacks (a replica added to a running cluster:
// makeMissingTables). It returns the versions it applied.
func Migrate(ctx context.Context, cfg Config, log *slog.Logger) ([]int, error) {
	// A migration may copy a table (0007 copies the readings, a minute at
	// 1M listings): its statement answers only when done.
	cfg.IdleTimeout = max(cfg.IdleTimeout, migrationTimeout)
	if err := createDatabase(ctx, cfg); err != nil {
		return nil, err
	}
	conn, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	applied, err := appliedMigrations(ctx, conn, cfg)
	if err != nil {
		return nil, err
	}
	all, err := Migrations()
	if err != nil {
		return nil, err
	}
	var done []int
	for _, m := range all {
		if applied[m.Version] {
			continue
		}
		for i, stmt := range m.Statements {
			if err := applyStatement(ctx, conn, cfg, m.Version, stmt); err != nil {
				return done, fmt.Errorf("migration %s statement %d: %w", m.Name, i+1, err)
			}
		}
		err := sendBatch(ctx, conn, "INSERT INTO schema_migrations (version, name, applied_at)", "schema_migrations",
			func(b driver.Batch) error { return b.Append(uint32(m.Version), m.Name, time.Now().UTC()) })
		if err != nil {
			return done, fmt.Errorf("record migration %s: %w", m.Name, err)
		}
		log.InfoContext(ctx, "migration applied", "version", m.Version, "name", m.Name)
		done = append(done, m.Version)
	}
	if cfg.Cluster != "" {
		if err := makeMissingTables(ctx, conn, cfg, log); err != nil {
			return done, err
		}
	}
	return done, nil
}

// createDatabase creates cfg's database, on every server of its cluster
// when it has one.
func createDatabase(ctx context.Context, cfg Config) error {
	root, err := open(ctx, cfg, "default")
	if err != nil {
		return err
	}
	defer root.Close()
	createDB := "CREATE DATABASE IF NOT EXISTS " + quoteIdent(cfg.Database)
	if cfg.Cluster != "" {
		createDB += " ON CLUSTER " + quoteIdent(cfg.Cluster)
	}
	if err := root.Exec(ctx, createDB); err != nil {
		return fmt.Errorf("create database %s: %w", cfg.Database, err)
	}
	return nil
}

// appliedMigrations creates the table of applied migrations if it is
// missing and returns the versions it holds.
func appliedMigrations(ctx context.Context, conn driver.Conn, cfg Config) (map[int]bool, error) {
	create, err := forDeployment(cfg, 0, `CREATE TABLE IF NOT EXISTS schema_migrations (
		version UInt32, name String, applied_at DateTime
	) ENGINE = ReplacingMergeTree(applied_at) ORDER BY version`)
	if err != nil {
		return nil, err
	}
	for _, stmt := range create {
		if err := conn.Exec(ctx, stmt); err != nil {
			return nil, fmt.Errorf("create schema_migrations: %w", err)
		}
	}
	applied := map[int]bool{}
	rows, err := conn.Query(ctx, "SELECT DISTINCT version FROM schema_migrations")
	if err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	for rows.Next() {
		var v uint32
		if err := rows.Scan(&v); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		applied[int(v)] = true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	if cfg.Cluster != "" {
		// The read above took each shard's rows from one of its replicas,
		// which may be one just added, its table still empty: what any
		// server holds counts too.
		appliedOnServers(ctx, conn, cfg, applied)
	}
	return applied, nil
}

// applyStatement runs one statement of migration version, as the
// deployment (one server or a cluster) needs it.
func applyStatement(ctx context.Context, conn driver.Conn, cfg Config, version int, stmt string) error {
	stmts, err := forDeployment(cfg, version, stmt)
	if err != nil {
		return err
	}
	for _, s := range stmts {
		if table, column, ok := addedColumn(s); ok && cfg.Cluster != "" && !strings.Contains(s, " ON CLUSTER ") {
			// A Distributed table's column, added on each server.
			if err := onEveryServer(ctx, conn, cfg, table, column, s); err != nil {
				return err
			}
			continue
		}
		if table, column, ok := addedColumn(s); ok {
			// 18.16 has no ADD COLUMN IF NOT EXISTS: a migration
			// cut short after this statement runs again.
			there, err := columnExists(ctx, conn, table, column)
			if err != nil {
				return err
			}
			if there {
				continue
			}
		}
		if err := conn.Exec(ctx, s); err != nil {
			return err
		}
	}
	return nil
}

// addedColumnRE matches a statement that adds a column, of one server
// (ALTER TABLE t ADD COLUMN c ...) or of a cluster (ALTER TABLE `db`.`t`
// ON CLUSTER `c` ADD COLUMN c ...).
var addedColumnRE = regexp.MustCompile("^ALTER TABLE (?:`[^`]+`\\.)?`?(\\w+)`?(?: ON CLUSTER `[^`]+`)? ADD COLUMN (\\w+) ")

// addedColumn returns the table and column a statement adds, if it adds
// one.
func addedColumn(stmt string) (table, column string, ok bool) {
	m := addedColumnRE.FindStringSubmatch(stmt)
	if m == nil {
		return "", "", false
	}
	return m[1], m[2], true
}

// columnExists reports whether a table of the current database has a
// column.
func columnExists(ctx context.Context, conn driver.Conn, table, column string) (bool, error) {
	var n uint64
	err := conn.QueryRow(ctx, "SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = ? AND name = ?", table, column).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for column %s of %s: %w", column, table, err)
	}
	return n > 0, nil
}
