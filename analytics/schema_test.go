package analytics_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
)

// CheckSchema: a database migrated by this release is served; one that
// also holds a later release's expand migrations is served beside them,
// which are named; one that holds a later release's contract migration,
// lacks one of this release's, or has none, is refused, with the
// migrations named (upgrades without a stop, analytics/schema.go).
func TestCheckSchema(t *testing.T) {
	s := chtest.Need(t, srv)
	ctx := context.Background()
	_, conn := s.Migrated(t)
	insert := func(conn driver.Conn, version int, name string) {
		t.Helper()
		b, err := conn.PrepareBatch(ctx, "INSERT INTO schema_migrations (version, name, applied_at)")
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Append(uint32(version), name, time.Now()); err != nil {
			t.Fatal(err)
		}
		if err := b.Send(); err != nil {
			t.Fatal(err)
		}
	}
	record := func(version int, name string) { insert(conn, version, name) }
	if unknown, err := analytics.CheckSchema(ctx, conn); err != nil || len(unknown) != 0 {
		t.Fatalf("this release's schema: %v, unknown %v", err, unknown)
	}
	record(9001, "9001_more_tables.sql")
	if unknown, err := analytics.CheckSchema(ctx, conn); err != nil || !slices.Equal(unknown, []string{"9001_more_tables.sql"}) {
		t.Fatalf("a later expand migration: %v, unknown %v", err, unknown)
	}
	record(9002, "9002_drop_old_column.contract.sql")
	if _, err := analytics.CheckSchema(ctx, conn); !errors.Is(err, analytics.ErrSchema) || !strings.Contains(err.Error(), "9002_drop_old_column.contract.sql") {
		t.Fatalf("a later contract migration: %v, want ErrSchema naming it", err)
	}

	// A database one migration behind this release: its record lacks the
	// newest.
	migs, err := analytics.Migrations()
	if err != nil {
		t.Fatal(err)
	}
	last := migs[len(migs)-1]
	root, err := analytics.Open(ctx, s.Config("default"))
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	fresh := func() analytics.Config {
		cfg := s.NewDatabase(t)
		if err := root.Exec(ctx, "CREATE DATABASE "+cfg.Database); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	cfg := fresh()
	if err := root.Exec(ctx, "CREATE TABLE "+cfg.Database+".schema_migrations (version UInt32, name String, applied_at DateTime) ENGINE = ReplacingMergeTree(applied_at) ORDER BY version"); err != nil {
		t.Fatal(err)
	}
	behind, err := analytics.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer behind.Close()
	for _, m := range migs[:len(migs)-1] {
		insert(behind, m.Version, m.Name)
	}
	if _, err := analytics.CheckSchema(ctx, behind); !errors.Is(err, analytics.ErrSchema) || !strings.Contains(err.Error(), last.Name) || !strings.Contains(err.Error(), "edge migrate") {
		t.Fatalf("a database behind: %v, want ErrSchema naming %s", err, last.Name)
	}

	// No migrations at all.
	none, err := analytics.Open(ctx, fresh())
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if _, err := analytics.CheckSchema(ctx, none); !errors.Is(err, analytics.ErrSchema) {
		t.Fatalf("a database without migrations: %v, want ErrSchema", err)
	}
	if !analytics.Contract("0012_x.contract.sql") || analytics.Contract("0010_attempts_log.sql") {
		t.Error("Contract reads the name wrong")
	}
}
