// Command edge is the edge server and its tools in one binary:
//
//	edge serve     answer the API from memory, rebuilding views in the background
//	edge migrate   create or upgrade the ClickHouse schema
//	edge seed      write a synthetic dataset into the upstream tables
//	edge account   create, disable or enable an account
//	edge key       create, list, revoke an account's API keys, or set a key's daily limit
//	edge fleet     print a new fleet token (edge fleet token)
//
// Run "edge <command> --help" for each command's settings.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands(stdin io.Reader) []command {
	return []command{
		{"serve", "Load the listing replica from ClickHouse and answer the API on the listen address.", runServe},
		{"migrate", "Create the ClickHouse database and tables, or upgrade them; safe to run again.", runMigrate},
		{"export", "Build one day's exports now (the serve's exports job does it every day).", runExport},
		{"seed", "Write a deterministic synthetic dataset into the upstream tables.", runSeed},
		{"account", "Create, disable or enable an account (an e-mail address and a password).", runAccount(stdin)},
		{"key", "Create, list or revoke an account's API keys, or set a key's daily limit.", runKey},
		{"fleet", "Print a new random fleet token for EDGE_FLEET_TOKEN (edge fleet token).", runFleet},
	}
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: edge <command> [flags]\n\nedge serves figures about store listings from memory, rebuilt in the background from ClickHouse.\n\ncommands:")
	for _, c := range commands(nil) {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nRun 'edge <command> --help' for the command's flags; every flag can also be set by an EDGE_* variable.")
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	for _, c := range commands(stdin) {
		if c.name != args[0] {
			continue
		}
		err := c.run(ctx, args[1:], stdout, stderr)
		switch {
		case err == nil:
			return 0
		case errors.Is(err, flag.ErrHelp):
			return 0
		default:
			fmt.Fprintf(stderr, "edge %s: %v\n", c.name, err)
			return 1
		}
	}
	fmt.Fprintf(stderr, "edge: unknown command %q\n\n", args[0])
	usage(stderr)
	return 2
}

func newLogger(w io.Writer, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("log level %q: use debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: use text or json", format)
}

func newQuietLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
