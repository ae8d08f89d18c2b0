package main

import (
	"context"
	"fmt"
	"io"

	"github.com/edge-stats/edge/analytics"
)

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("migrate", "Create the ClickHouse database and tables, or upgrade them to this binary's schema.\nEvery migration is recorded in schema_migrations; running migrate again changes nothing.")
	var ch analytics.Config
	var logFormat, logLevel string
	f.clickhouse(&ch)
	f.String(&logFormat, "log-format", "text", "log format: text or json")
	f.String(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.fs.SetOutput(stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	log, err := newLogger(stderr, logFormat, logLevel)
	if err != nil {
		return err
	}
	applied, err := analytics.Migrate(ctx, ch, log)
	if err != nil {
		return err
	}
	if len(applied) == 0 {
		fmt.Fprintf(stdout, "schema of %s is up to date\n", ch.Database)
	} else {
		fmt.Fprintf(stdout, "applied migrations %v to %s\n", applied, ch.Database)
	}
	return nil
}
