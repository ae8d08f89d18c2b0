package analytics

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
)

// Upgrades without a stop take two kinds of migration. An
// expand migration (the default) only adds: tables, views, columns that
// no reader needs. The release before keeps serving on the schema it
// leaves, so it is applied first, while that release serves, and the
// edges are then restarted on the new release one by one. A contract
// migration removes or changes what an earlier release reads: its file
// is named <version>_<name>.contract.sql, and it ships only in a release
// after every edge runs one that no longer reads what it removes.

// ErrSchema says the database's schema is not one this release serves:
// it lacks a migration of this release's (run migrate), or holds a
// contract migration this release does not know (run the release that
// made it).
var ErrSchema = errors.New("the database's schema is not one this release serves")

// Contract reports whether the migration named name removes or changes
// what an earlier release reads (its name ends in .contract.sql).
func Contract(name string) bool { return strings.HasSuffix(name, ".contract.sql") }

// CheckSchema compares the migrations recorded in the database with this
// release's. It returns an error wrapping ErrSchema that names them when
// the database lacks one of this release's migrations, or holds a
// contract migration this release does not know; else the names of the
// expand migrations it holds that this release does not know (a later
// release's, which this one serves beside).
func CheckSchema(ctx context.Context, conn driver.Conn) (unknown []string, err error) {
	rows, err := conn.Query(ctx, "SELECT DISTINCT version, name FROM schema_migrations")
	if err != nil {
		if strings.Contains(err.Error(), "doesn't exist") || strings.Contains(err.Error(), "UNKNOWN_TABLE") {
			return nil, fmt.Errorf("%w: it has no migrations: run edge migrate", ErrSchema)
		}
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	defer rows.Close()
	applied := map[int]string{}
	for rows.Next() {
		var v uint32
		var name string
		if err := rows.Scan(&v, &name); err != nil {
			return nil, fmt.Errorf("read schema_migrations: %w", err)
		}
		applied[int(v)] = name
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read schema_migrations: %w", err)
	}
	known, err := Migrations()
	if err != nil {
		return nil, err
	}
	var missing, contract []string
	mine := map[int]bool{}
	for _, m := range known {
		mine[m.Version] = true
		if _, ok := applied[m.Version]; !ok {
			missing = append(missing, m.Name)
		}
	}
	for v, name := range applied {
		if mine[v] {
			continue
		}
		if Contract(name) {
			contract = append(contract, name)
		} else {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(contract)
	slices.Sort(unknown)
	switch {
	case len(contract) > 0:
		return unknown, fmt.Errorf("%w: it holds %s, which this release does not know and which changes what it reads: run the release that made it", ErrSchema, strings.Join(contract, ", "))
	case len(missing) > 0:
		return unknown, fmt.Errorf("%w: it lacks %s: run edge migrate of this release first (expand migrations are safe while the release before serves)", ErrSchema, strings.Join(missing, ", "))
	}
	return unknown, nil
}
