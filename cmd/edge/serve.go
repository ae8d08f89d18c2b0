package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/cron/memory"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
)

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	f := newFlags("serve", "Load the listing replica from ClickHouse and answer the API on the listen address.\nThe server listens at once; /readyz answers 503 until the replica is loaded.")
	var (
		ch                   analytics.Config
		srv                  = edge.DefaultConfig()
		logFormat, logLevel  string
		fullSchedule         string
		refreshSchedule      string
		editionsSchedule     string
		ranksSchedule        string
		retentionSchedule    string
		usageRetentionDays   int
		trusted, exempt      string
		maxEditions          int
		backoffMin, backoffM time.Duration
		memLimit             string
		debugListen          string
		gcPercent            int
		replaceWait          time.Duration
		exportsCfg           = cron.ExportsConfig{Dir: "data/exports", Keep: 30, Grace: 2 * time.Hour, PerRun: 2}
		exportsSchedule      string
	)
	f.clickhouse(&ch)
	f.String(&srv.Listen, "listen", srv.Listen, "address to listen on")
	f.Duration(&srv.ReadTimeout, "read-timeout", srv.ReadTimeout, "longest time to read a request")
	f.Duration(&srv.WriteTimeout, "write-timeout", srv.WriteTimeout, "longest time to write a response")
	f.Duration(&srv.IdleTimeout, "idle-timeout", srv.IdleTimeout, "how long an idle keep-alive connection stays open")
	f.Duration(&srv.ShutdownTimeout, "shutdown-timeout", srv.ShutdownTimeout, "how long a graceful stop waits for requests in flight")
	f.Duration(&srv.DrainTimeout, "drain-timeout", srv.DrainTimeout, "how long a stopping edge keeps its connections, closing each after its next answer, before it closes those still idle")
	f.Duration(&replaceWait, "replace-wait", 10*time.Minute, "on SIGUSR2, how long the new process may take to load before the replacement is given up")
	f.Duration(&srv.ReadBudget, "read-budget", srv.ReadBudget, "longest a per-request ClickHouse read (reviews) may take")
	f.Duration(&srv.TextBudget, "text-budget", srv.TextBudget, "time budget of a text search (q) on /api/v1/listings; past it the answer is partial")
	f.Duration(&srv.SearchBudget, "search-budget", srv.SearchBudget, "time budget of a review search in ClickHouse, in whole seconds; past it the answer is partial")
	f.Uint64(&srv.SearchMaxRows, "search-max-rows", srv.SearchMaxRows, "rows a review search may read in ClickHouse before its answer is partial (0: no bound)")
	f.Int(&srv.CacheMB, "cache-mb", srv.CacheMB, "size of the encoded-answer cache in MiB")
	f.Float(&srv.Misses.Share, "miss-share", srv.Misses.Share, "share of the CPU (GOMAXPROCS) that uncached answers to queries may take while other work waits for a core: ceil(GOMAXPROCS × share) at a time, within GOMAXPROCS × share seconds of computing a second; they take the idle CPU otherwise")
	f.Duration(&srv.Misses.Wait, "miss-wait", srv.Misses.Wait, "longest an uncached answer to a query waits for its turn before it answers 503 Retry-After: 1")
	f.Int(&srv.Misses.Queue, "miss-queue", srv.Misses.Queue, "uncached answers to queries that may wait at once, per turn; past it they answer 503 at once")
	f.Int(&srv.MaxURIBytes, "max-uri-bytes", srv.MaxURIBytes, "longest request URI; longer ones answer 414")
	f.Int(&srv.MaxHeaderBytes, "max-header-bytes", srv.MaxHeaderBytes, "largest request line and headers together, read into a buffer of this size a connection; larger ones answer 431")
	f.Int(&srv.MaxBodyBytes, "max-body-bytes", srv.MaxBodyBytes, "largest request body (/mcp, /account); larger ones answer 413")
	f.String(&srv.PublicURL, "public-url", srv.PublicURL, "the service's public address, for links (the CSV's url column)")
	f.String(&trusted, "trusted-proxies", "", "comma-separated addresses or CIDR ranges of proxies whose header (--client-header) names the client")
	f.Int(&srv.IPv6Prefix, "ipv6-prefix", srv.IPv6Prefix, "leading bits of an IPv6 address that name one caller for every per-address limit (a host gets a /64 as easily as one address)")
	f.String(&srv.ClientHeader, "client-header", "x-forwarded-for", "the header the trusted proxies name the client in: x-forwarded-for (every line read) or forwarded (RFC 7239); read only the one they write")
	f.Float(&srv.FairUseRate, "fair-use-rate", srv.FairUseRate, "legacy API: requests a second per address (0 turns fair use off)")
	f.Int(&srv.FairUseBurst, "fair-use-burst", srv.FairUseBurst, "legacy API: requests an address may make at once")
	f.String(&exempt, "fair-use-exempt", "", "comma-separated addresses or CIDR ranges without fair use (a CDN's)")
	f.Int(&srv.Limits.Anonymous.PerMinute, "anon-per-minute", srv.Limits.Anonymous.PerMinute, "v1 calls a minute per address without a key")
	f.Uint64(&srv.Limits.Anonymous.PerDay, "anon-per-day", srv.Limits.Anonymous.PerDay, "v1 calls a UTC day per address without a key")
	f.Int(&srv.Limits.Keyed.PerMinute, "key-per-minute", srv.Limits.Keyed.PerMinute, "v1 calls a minute per key")
	f.Uint64(&srv.Limits.Keyed.PerDay, "key-per-day", srv.Limits.Keyed.PerDay, "v1 calls a UTC day per key, unless raised for the key (edge key limit)")
	f.Int(&srv.Limits.InvalidKeys, "invalid-keys", srv.Limits.InvalidKeys, "invalid keys a minute from one address before its keys are refused unread (429)")
	f.Int(&srv.Limits.SearchSlots, "search-slots", srv.Limits.SearchSlots, "searches running at once across every caller (the search pool)")
	f.Float(&srv.Limits.SearchRate, "search-rate", srv.Limits.SearchRate, "searches started a second across every caller (0: no bound)")
	f.Int(&srv.Limits.MaxActive, "limits-max-active", srv.Limits.MaxActive, "most callers held with their minute's window (about 512 bytes each); past it, idle callers are evicted first, and never one whose day calls are not all in the fleet's totals")
	f.Int(&srv.Limits.MaxSubjects, "limits-max-subjects", srv.Limits.MaxSubjects, "most callers of the day held in the fleet's totals (about 40 bytes each); past it, those with the fewest calls are folded into a floor that never admits a call past a day")
	f.Int(&srv.Limits.MaxAddresses, "limits-max-addresses", srv.Limits.MaxAddresses, "most addresses held by the invalid-key counter (about 320 bytes each)")
	f.Duration(&srv.Limits.StaleAfter, "usage-stale-after", srv.Limits.StaleAfter, "age of the fleet's daily usage past which v1 calls answer 503 (ClickHouse out of reach)")
	f.Duration(&srv.UsageEvery, "usage-every", srv.UsageEvery, "how often counted calls are flushed to ClickHouse and the fleet's totals read back")
	f.Duration(&srv.KeysEvery, "keys-every", srv.KeysEvery, "how often the key list is reloaded (a new or revoked key takes effect within it); at most 30s")
	f.Bool(&srv.Replay, "replay", srv.Replay, "answer a cached answer's repeated requests on the raw connection from a record of its answer, before fasthttp and fiber read them (needs --raw-io; docs/operations.md, The replay path); false: every request takes the full path, the same bytes")
	f.Bool(&srv.RawIO, "raw-io", srv.RawIO, "accepted connections read and write by raw system calls and send large answers by sendfile (Linux amd64 and arm64); false: the standard library's connections, the same bytes")
	f.Bool(&srv.NoLimits, "no-limits", false, "serve /api/v1 without keys and limits: only for an internal edge behind a gateway that applies them, or to benchmark their cost")
	f.Int(&srv.SignInFailures, "signin-failures", srv.SignInFailures, "failed sign-ins to /account at one e-mail address from one client address in 15 minutes before they are throttled (three times as many from one address at any)")
	f.Int(&srv.SignInEmailFailures, "signin-email-failures", srv.SignInEmailFailures, "failed sign-ins to /account at one e-mail address from every client address together in 15 minutes before it is throttled")
	f.Duration(&srv.HashWait, "hash-wait", srv.HashWait, "how long a sign-in or sign-up waits for a password hashing slot before it answers 503")
	f.String(&fullSchedule, "full-schedule", "7 * * * *", "cron spec (UTC) of the full reload of listings, history and figures")
	f.String(&refreshSchedule, "refresh-schedule", "*/5 * * * *", "cron spec (UTC) of the incremental refresh of changed listings")
	f.String(&editionsSchedule, "editions-schedule", "10 0 * * 1", "cron spec (UTC) of the weekly editions build (after each ISO week ends); off: no editions (/api/v1/week answers 503)")
	f.String(&ranksSchedule, "ranks-schedule", "20 * * * *", "cron spec (UTC) of the daily store ranks of listing histories (days not ranked yet or with new crawls); off on all but one edge of a fleet")
	f.Int(&maxEditions, "max-editions", 260, "most weekly editions kept built, newest first")
	f.String(&retentionSchedule, "usage-retention-schedule", "30 3 * * *", "cron spec (UTC) of the job that drops old days of the usage table; off: none (keep every day)")
	f.Int(&usageRetentionDays, "usage-retention-days", 35, "days of the usage table kept (the day's count is all the limits need)")
	f.String(&exportsSchedule, "exports-schedule", "40 * * * *", "cron spec (UTC) of the job that builds the daily exports of the days closed since (at most two a run) and prunes old ones; off: none on this edge (/api/v1/exports answers 503)")
	f.String(&exportsCfg.Dir, "exports-dir", exportsCfg.Dir, "directory of the daily exports: this edge's own, or one shared by the fleet (each day is built once and published by an atomic rename)")
	f.Int(&exportsCfg.Keep, "exports-keep", exportsCfg.Keep, "days of exports kept")
	f.Duration(&exportsCfg.Grace, "exports-grace", exportsCfg.Grace, "how long after a day's end its late readings are awaited before the day is exported")
	f.Duration(&backoffMin, "retry-min", time.Second, "first wait before a failed job is retried")
	f.Duration(&backoffM, "retry-max", time.Minute, "longest wait between retries of a failed job")
	f.String(&logFormat, "log-format", "text", "log format: text or json")
	f.String(&logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.String(&memLimit, "memory-limit", "auto", "the memory the edge may use, such as 12GiB: the Go heap's soft limit is set to it less a tenth and the answer cache (auto: the cgroup's memory limit; off: none; GOMEMLIMIT, when set, wins)")
	f.Int(&gcPercent, "gc-percent", 25, "the Go collector's GOGC: how far the heap may grow past the live state before a collection. The state is large and long-lived and requests allocate little, so a low value costs little CPU and keeps RSS near the live heap (GOGC, when set, wins)")
	f.String(&debugListen, "debug-listen", "", "address of Go's profiles (/debug/pprof/), such as 127.0.0.1:6060; empty: none. Loopback or private only")
	f.fs.SetOutput(stderr)
	if err := f.parse(args); err != nil {
		return err
	}
	if srv.KeysEvery <= 0 || srv.KeysEvery > 30*time.Second {
		return fmt.Errorf("--keys-every %v: use a duration from 1ms to 30s", srv.KeysEvery)
	}
	if srv.UsageEvery <= 0 || srv.Limits.StaleAfter < 2*srv.UsageEvery {
		return fmt.Errorf("--usage-every %v and --usage-stale-after %v: syncs must be positive and at least twice as frequent as the staleness bound", srv.UsageEvery, srv.Limits.StaleAfter)
	}
	log, err := newLogger(stderr, logFormat, logLevel)
	if err != nil {
		return err
	}
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		log.Info("memory limit", "source", "GOMEMLIMIT", "value", v)
	} else {
		self, _ := os.ReadFile("/proc/self/cgroup")
		limit, source, err := memory.Limit(memLimit, os.DirFS("/sys/fs/cgroup"), string(self), int64(srv.CacheMB)<<20)
		if err != nil {
			return err
		}
		if limit > 0 {
			debug.SetMemoryLimit(limit)
		}
		log.Info("memory limit", "source", source, "heap_limit_mib", limit>>20)
	}

	if os.Getenv("GOGC") == "" {
		if gcPercent < 1 {
			return fmt.Errorf("--gc-percent %d: use a positive percentage (GOGC=off turns the collector off, which an edge should not)", gcPercent)
		}
		debug.SetGCPercent(gcPercent)
		log.Info("collector", "gc_percent", gcPercent)
	} else {
		log.Info("collector", "source", "GOGC", "value", os.Getenv("GOGC"))
	}
	if debugListen != "" {
		if err := serveDebug(ctx, debugListen, log); err != nil {
			return err
		}
	}
	// The listener: handed over by the process this one replaces (or by
	// systemd), else our own.
	ln, ready, err := inheritedListener()
	if err != nil {
		return err
	}
	if ln == nil {
		if ln, err = net.Listen("tcp", srv.Listen); err != nil {
			return fmt.Errorf("listen on %s: %w", srv.Listen, err)
		}
	}
	// Three pools: the jobs', the usage sync's and the keys' refresh, and
	// the per-request reads', so that none can starve another
	// (docs/operations.md, Faults).
	db, jobsDB, syncDB := analytics.NewLazy(ch), analytics.NewLazy(ch), analytics.NewLazy(syncConfig(ch))
	defer db.Close()
	defer jobsDB.Close()
	defer syncDB.Close()
	state := &views.Published[views.State]{}
	jobs := cron.New(ctx, log, cron.Backoff{Initial: backoffMin, Max: backoffM})
	vb := cron.NewViews(jobsDB, state, log)
	for _, j := range []cron.Job{vb.FullJob(fullSchedule), vb.RefreshJob(refreshSchedule)} {
		if err := jobs.Add(j); err != nil {
			return err
		}
	}
	editions := &views.Published[editions.Set]{}
	if editionsSchedule != "off" {
		if err := jobs.Add(cron.EditionsJob(jobsDB, editions, editionsSchedule, maxEditions, vb.Heavy(), vb.WaitFigures, log)); err != nil {
			return err
		}
	}
	// In a fleet, one edge is enough to rank: the ranks are stored in
	// ClickHouse, which every edge reads.
	if ranksSchedule != "off" {
		if err := jobs.Add(cron.RanksJob(jobsDB, ranksSchedule, log)); err != nil {
			return err
		}
	}
	if retentionSchedule != "off" {
		if usageRetentionDays < 1 {
			return fmt.Errorf("--usage-retention-days %d: keep at least today (1)", usageRetentionDays)
		}
		if err := jobs.Add(cron.UsageRetentionJob(jobsDB, retentionSchedule, usageRetentionDays, log)); err != nil {
			return err
		}
	}
	var exp *cron.Exports
	if exportsSchedule != "off" {
		if exportsCfg.Keep < 1 {
			return fmt.Errorf("--exports-keep %d: keep at least one day", exportsCfg.Keep)
		}
		exp = cron.NewExports(exportsCfg, jobsDB, log)
		if err := jobs.Add(exp.Job(exportsSchedule)); err != nil {
			return err
		}
	}
	if srv.TrustedProxies, err = clientip.ParsePrefixes(trusted); err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	if srv.FairUseExempt, err = clientip.ParsePrefixes(exempt); err != nil {
		return fmt.Errorf("--fair-use-exempt: %w", err)
	}
	src := edge.Sources{State: state, Editions: editions, Jobs: jobs.Status, DB: db}
	if exp != nil {
		src.Exports = exp
		if err := exp.Refresh(); err != nil { // the days already there, before the job's first run
			log.Warn("exports", "err", err)
		}
	}
	server, err := edge.New(srv, src, log)
	if err != nil {
		return err
	}
	vb.OnReloadBuild(server.DropAnswers)
	jobs.Start()
	reloadOnHangup(ctx, jobs.RunNow, log)
	if ready != nil {
		// Taking over from a running process: it answers until this one
		// has its figures, then stops accepting.
		log.Info("taking over a listener: loading before answering", "addr", ln.Addr().String())
		if err := vb.WaitFigures(ctx); err != nil {
			ln.Close()
			return fmt.Errorf("take over: %w", err)
		}
		reportReady(ready)
	}
	serveCtx, handover := context.WithCancel(ctx)
	defer handover()
	replaceOnUSR2(serveCtx, ln, replaceWait, func() { handover() }, log)
	log.Info("edge listening", "addr", ln.Addr().String(), "clickhouse", ch.Addr, "database", ch.Database)
	err = server.Serve(serveCtx, ln)
	log.Info("edge stopping: waiting for background jobs")
	jobs.Stop()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("edge stopped")
	return nil
}

// syncConfig is the configuration of the usage sync's and keys' refresh's
// pool: two connections are enough for reads of a few rows every few
// seconds.
func syncConfig(ch analytics.Config) analytics.Config {
	ch.MaxConns = 2
	return ch
}
