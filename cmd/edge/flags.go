package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/edge-stats/edge/analytics"
)

// envFlags registers flags whose defaults come from EDGE_* variables, so
// every setting can be given either way; a flag wins over its variable.
type envFlags struct {
	fs      *flag.FlagSet
	err     error
	secrets []func()
}

func (e *envFlags) env(name string) (string, bool) {
	return os.LookupEnv("EDGE_" + envName(name))
}

// envName is the variable part of a flag's name: READ_TIMEOUT for
// read-timeout.
func envName(name string) string { return strings.ToUpper(strings.ReplaceAll(name, "-", "_")) }

func (e *envFlags) usage(name, usage string) string {
	return usage + " (env EDGE_" + envName(name) + ")"
}

func (e *envFlags) String(p *string, name, def, usage string) {
	if v, ok := e.env(name); ok {
		def = v
	}
	e.fs.StringVar(p, name, def, e.usage(name, usage))
}

func (e *envFlags) Int(p *int, name string, def int, usage string) {
	if v, ok := e.env(name); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			e.err = fmt.Errorf("EDGE_%s: %q is not a whole number", envName(name), v)
		}
		def = n
	}
	e.fs.IntVar(p, name, def, e.usage(name, usage))
}

func (e *envFlags) Uint64(p *uint64, name string, def uint64, usage string) {
	if v, ok := e.env(name); ok {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			e.err = fmt.Errorf("EDGE_%s: %q is not a whole number", envName(name), v)
		}
		def = n
	}
	e.fs.Uint64Var(p, name, def, e.usage(name, usage))
}

func (e *envFlags) Int64(p *int64, name string, def int64, usage string) {
	if v, ok := e.env(name); ok {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			e.err = fmt.Errorf("EDGE_%s: %q is not a whole number", envName(name), v)
		}
		def = n
	}
	e.fs.Int64Var(p, name, def, e.usage(name, usage))
}

func (e *envFlags) Float(p *float64, name string, def float64, usage string) {
	if v, ok := e.env(name); ok {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			e.err = fmt.Errorf("EDGE_%s: %q is not a number", envName(name), v)
		}
		def = f
	}
	e.fs.Float64Var(p, name, def, e.usage(name, usage))
}

func (e *envFlags) Duration(p *time.Duration, name string, def time.Duration, usage string) {
	if v, ok := e.env(name); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			e.err = fmt.Errorf("EDGE_%s: %q is not a duration such as 30s", envName(name), v)
		}
		def = d
	}
	e.fs.DurationVar(p, name, def, e.usage(name, usage))
}

func (e *envFlags) Bool(p *bool, name string, def bool, usage string) {
	if v, ok := e.env(name); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			e.err = fmt.Errorf("EDGE_%s: %q is not true or false", envName(name), v)
		}
		def = b
	}
	e.fs.BoolVar(p, name, def, e.usage(name, usage))
}

// Secret registers a flag whose variable's value is never shown as a
// default in --help.
func (e *envFlags) Secret(p *string, name, usage string) {
	e.fs.StringVar(p, name, "", e.usage(name, usage))
	if v, ok := e.env(name); ok {
		e.secrets = append(e.secrets, func() {
			if !e.set(name) {
				*p = v
			}
		})
	}
}

func (e *envFlags) set(name string) bool {
	found := false
	e.fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}

// clickhouse registers the settings that reach ClickHouse.
func (e *envFlags) clickhouse(cfg *analytics.Config) {
	d := analytics.DefaultConfig()
	e.String(&cfg.Addr, "ch-addr", d.Addr, "ClickHouse native protocol address host:port, or several comma separated (a cluster's replicas, the first preferred)")
	e.String(&cfg.Database, "ch-database", d.Database, "ClickHouse database")
	e.String(&cfg.Cluster, "ch-cluster", d.Cluster, "ClickHouse cluster (remote_servers) the database lives on: migrate creates replicated, sharded tables behind Distributed ones; empty for one server")
	e.String(&cfg.User, "ch-user", d.User, "ClickHouse user")
	e.Secret(&cfg.Password, "ch-password", "ClickHouse password (prefer the variable: flags show in process lists)")
	e.Duration(&cfg.DialTimeout, "ch-dial-timeout", d.DialTimeout, "how long connecting to ClickHouse may take")
	e.Duration(&cfg.IdleTimeout, "ch-idle-timeout", d.IdleTimeout, "how long a ClickHouse query may go without a byte from the server (a running query sends progress) before it fails")
	e.Int(&cfg.MaxConns, "ch-max-conns", d.MaxConns, "open ClickHouse connections at most")
	e.Int(&cfg.PartSize, "ch-part-size", d.PartSize, "listings one read of a full load covers: ClickHouse memory per read grows with it")
	e.Uint64(&cfg.MaxQueryMemory, "ch-max-query-memory", 0, "max_memory_usage (bytes) of every ClickHouse query; 0 keeps the server's")
}

// parse parses args and reports the first bad variable.
func (e *envFlags) parse(args []string) error {
	if err := e.fs.Parse(args); err != nil {
		return err
	}
	if e.err != nil {
		return e.err
	}
	for _, apply := range e.secrets {
		apply()
	}
	if e.fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %s", strings.Join(e.fs.Args(), " "))
	}
	return nil
}

func newFlags(name, summary string) *envFlags {
	fs := flag.NewFlagSet("edge "+name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: edge %s [flags]\n\n%s\n\nEvery flag can also be set by the EDGE_* variable named beside it; a flag wins.\n\n", name, summary)
		fs.PrintDefaults()
	}
	return &envFlags{fs: fs}
}
