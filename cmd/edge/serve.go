package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"runtime/debug"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/builder"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/fleet"
	"github.com/edge-stats/edge/internal/memory"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/served"
)

// setRuntime applies the process's memory policy (the heap's limit and
// the collector: package internal/memory) and starts the debug listener.
func setRuntime(ctx context.Context, c *serveConfig, log *slog.Logger) error {
	if v := os.Getenv("GOMEMLIMIT"); v != "" {
		log.Info("memory limit", "source", "GOMEMLIMIT", "value", v)
	} else {
		self, _ := os.ReadFile("/proc/self/cgroup")
		limit, source, err := memory.Limit(c.memLimit, os.DirFS("/sys/fs/cgroup"), string(self), int64(c.srv.CacheMB)<<20)
		if err != nil {
			return err
		}
		if limit > 0 {
			debug.SetMemoryLimit(limit)
		}
		log.Info("memory limit", "source", source, "heap_limit_mib", limit>>20)
	}
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(c.gcPercent)
		log.Info("collector", "gc_percent", c.gcPercent)
	} else {
		log.Info("collector", "source", "GOGC", "value", os.Getenv("GOGC"))
	}
	if c.debugListen != "" {
		return serveDebug(ctx, c.debugListen, log)
	}
	return nil
}

// listen returns the listener: handed over by the process this one
// replaces (or by systemd), with what to tell it once this one is ready,
// else a listener of its own on addr.
func listen(addr string) (net.Listener, *os.File, error) {
	ln, ready, err := inheritedListener()
	if err != nil || ln != nil {
		return ln, ready, err
	}
	if ln, err = net.Listen("tcp", addr); err != nil {
		return nil, nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil, nil
}

// takeOver, when this process takes over a listener from a running one
// (ready is set), waits for its figures before it answers: the running
// one answers until then, and stops accepting once told ready.
func takeOver(ctx context.Context, ln net.Listener, ready *os.File, figures func(context.Context) error, log *slog.Logger) error {
	if ready == nil {
		return nil
	}
	log.Info("taking over a listener: loading before answering", "addr", ln.Addr().String())
	if err := figures(ctx); err != nil {
		ln.Close()
		return fmt.Errorf("take over: %w", err)
	}
	reportReady(ready)
	return nil
}

// serveJobs is what the jobs publish, and the jobs the server reads from.
type serveJobs struct {
	state    *views.Published[served.State]
	editions *views.Published[editions.Set]
	builder  *builder.Builder
	exports  *cron.Exports // nil when this edge builds no exports
}

// ranksJob is the ranks job, which, when exp's latest set waits for the
// ranks, runs the exports job as it ends: the set is built minutes after
// the ranks, not at the exports job's next hour.
func ranksJob(ranks cron.Job, jobs *cron.Runner, exp *cron.Exports, log *slog.Logger) cron.Job {
	if exp == nil {
		return ranks
	}
	run := ranks.Run
	ranks.Run = func(ctx context.Context) error {
		err := run(ctx)
		if err == nil && exp.WaitingForRanks() {
			go func() {
				if err := jobs.RunNow("exports"); err != nil {
					log.Warn("exports after the ranks", "err", err)
				}
			}()
		}
		return err
	}
	return ranks
}

// addJobs adds every job c turns on to jobs, reading from db. leading,
// when not nil, says whether this edge leads its fleet: the jobs a fleet
// needs once run only then.
func addJobs(c *serveConfig, jobs *cron.Runner, db *analytics.Lazy, leading func() bool, log *slog.Logger) (*serveJobs, error) {
	j := &serveJobs{state: &views.Published[served.State]{}, editions: &views.Published[editions.Set]{}}
	j.builder = builder.New(db, j.state, log)
	j.builder.SetChangeWindow(time.Duration(c.changeDays) * 24 * time.Hour)
	add := []cron.Job{j.builder.FullJob(c.full), j.builder.RefreshJob(c.refresh)}
	if c.editions != "off" {
		ed := cron.EditionsJob(db, j.editions, c.editions, c.maxEditions, j.builder.Heavy(), j.builder.WaitFigures, leading, log)
		ed.OnLead = true // a new leader builds the editions it finds missing at once
		add = append(add, ed)
	}
	// In a fleet, one edge is enough to rank: the ranks are stored in
	// ClickHouse, which every edge reads. So for the usage retention.
	var once []cron.Job
	if c.exportsSchedule != "off" {
		c.exports.AfterRanks = c.ranks != "off"
		j.exports = cron.NewExports(c.exports, db, log)
		j.exports.WaitFor(j.builder.WaitFigures)
	}
	if c.ranks != "off" {
		once = append(once, ranksJob(cron.RanksJob(db, c.ranks, log), jobs, j.exports, log))
	}
	if c.retention != "off" {
		once = append(once, cron.UsageRetentionJob(db, c.retention, c.retentionDays, log))
	}
	for _, j := range once {
		j.OnlyIf, j.OnLead = leading, true
		add = append(add, j)
	}
	if j.exports != nil {
		add = append(add, j.exports.Job(c.exportsSchedule))
	}
	for _, job := range add {
		if err := jobs.Add(job); err != nil {
			return nil, err
		}
	}
	return j, nil
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseServe(args, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, c.logFormat, c.logLevel)
	if err != nil {
		return err
	}
	if err := setRuntime(ctx, c, log); err != nil {
		return err
	}
	ln, ready, err := listen(c.srv.Listen)
	if err != nil {
		return err
	}
	// Three pools: the jobs', the usage sync's and the keys' refresh, and
	// the per-request reads', so that none can starve another
	// (docs/operations.md, Faults).
	if err := checkSchema(ctx, c.ch, log); err != nil {
		return err
	}
	db, jobsDB, syncDB := analytics.NewLazy(c.ch), analytics.NewLazy(c.ch), analytics.NewLazy(syncConfig(c.ch))
	defer db.Close()
	defer jobsDB.Close()
	defer syncDB.Close()
	jobs := cron.New(ctx, log, cron.Backoff{Initial: c.backoffMin, Max: c.backoffMax})
	member := fleet.New(c.fleetConfig(), log) // nil: no fleet
	built, err := addJobs(c, jobs, jobsDB, member.Leading(), log)
	if err != nil {
		return err
	}
	defer member.Close()
	if err := member.Join(ctx, ln.Addr().String(), fleet.State{Published: built.state, Builder: built.builder, Exports: built.exports, Jobs: jobs}); err != nil {
		return err
	}
	src := edge.Sources{State: built.state, Editions: built.editions, Jobs: jobs.Status, DB: db, SyncDB: syncDB, Leading: member.Leading(),
		Epoch: member.Epoch(), Collectors: member.Collectors(), Building: built.builder.Building, Fleet: member.Status()}
	relayed(member, &src, syncDB, c.srv.KeysEvery, c.fleet.Keys != nil)
	if built.exports != nil {
		src.Exports = built.exports
		if err := built.exports.Refresh(); err != nil { // the days already there, before the job's first run
			log.Warn("exports", "err", err)
		}
	}
	guardOwnServices(ctx, c, ln.Addr().String())
	server, err := edge.New(c.srv, src, log)
	if err != nil {
		return err
	}
	serveRelayed(member, server)
	built.builder.OnReloadBuild(server.DropAnswers)
	jobs.Start()
	reloadOnHangup(ctx, jobs.RunNow, log)
	if err := takeOver(ctx, ln, ready, built.builder.WaitFigures, log); err != nil {
		return err
	}
	serveCtx, handover := context.WithCancel(ctx)
	defer handover()
	replaceOnUSR2(serveCtx, ln, c.replaceWait, func() { handover() }, log)
	log.Info("edge listening", "addr", ln.Addr().String(), "pages", "http://"+ln.Addr().String()+"/", "clickhouse", c.ch.Addr, "database", c.ch.Database)
	err = server.Serve(serveCtx, ln)
	log.Info("edge stopping: waiting for background jobs")
	jobs.Stop()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	log.Info("edge stopped")
	return nil
}

// guardOwnServices keeps webhooks off this edge's own services, whatever
// the allow list says, and off another port of their hosts unless it
// names that address and port (ownServices); listen is the address the
// edge listens on.
func guardOwnServices(ctx context.Context, c *serveConfig, listen string) {
	own, hosts := ownServices(ctx, c, listen)
	c.srv.Webhooks.Policy.Deny = append(c.srv.Webhooks.Policy.Deny, own...)
	c.srv.Webhooks.Policy.Hosts = hosts
	c.srv.Webhooks.Policy.Local = egress.NewLocalCache(time.Second) // addresses this host gains later are its own too
}

// ownServices returns the rules that keep webhooks off this edge's own
// services: its listen, fleet (as listened on and as advertised) and
// debug addresses, and its ClickHouse's and ZooKeeper's hosts on the
// ports given and the ports those servers usually also listen on
// (ClickHouse's HTTP, which takes SQL, among them); and the addresses of
// those services' hosts, whose other ports a webhook reaches only when
// the allow list names the address and port (egress.Policy.Hosts). Each
// is taken at every address that reaches it, however it is named: a
// service of this host's at every loopback, unspecified and interface
// address (egress.OwnHosts).
func ownServices(ctx context.Context, c *serveConfig, listen string) ([]egress.Rule, []netip.Prefix) {
	var own []string
	for _, a := range []string{listen, c.srv.Listen, c.fleetListen, advertisedHostPort(c.fleetAdvertise), c.debugListen} {
		if a != "" {
			own = append(own, a)
		}
	}
	rules := egress.Own(ctx, nil, own)
	clickhousePorts := []uint16{8123, 8443, 9000, 9004, 9005, 9009, 9010, 9011, 9363, 9440}
	rules = append(rules, egress.Own(ctx, nil, analytics.Addrs(c.ch.Addr), clickhousePorts...)...)
	hosts := append(own, analytics.Addrs(c.ch.Addr)...)
	if c.zk != "" {
		rules = append(rules, egress.Own(ctx, nil, analytics.Addrs(c.zk), 2181, 2281, 2888, 3888, 7000, 8080)...)
		hosts = append(hosts, analytics.Addrs(c.zk)...)
	}
	return rules, egress.OwnHosts(ctx, nil, hosts)
}

// advertisedHostPort is the host:port of the fleet URL u ("" for none or
// one without a host), its scheme's port when it names none.
func advertisedHostPort(u string) string {
	p, err := url.Parse(u)
	if u == "" || err != nil || p.Hostname() == "" {
		return ""
	}
	if port := p.Port(); port != "" {
		return net.JoinHostPort(p.Hostname(), port)
	}
	if p.Scheme == "http" {
		return net.JoinHostPort(p.Hostname(), "80")
	}
	return net.JoinHostPort(p.Hostname(), "443")
}

// syncConfig is the configuration of the usage sync's and keys' refresh's
// pool: two connections are enough for reads of a few rows every few
// seconds.
func syncConfig(ch analytics.Config) analytics.Config {
	ch.MaxConns = 2
	return ch
}

// checkSchema refuses to serve on a schema this release does not serve
// (analytics.CheckSchema: it lacks a migration of this release's, or
// holds a contract migration of a later one), naming it. With ClickHouse
// out of reach it says so and serves: the edge then loads when it can,
// as it always has.
func checkSchema(ctx context.Context, cfg analytics.Config, log *slog.Logger) error {
	cfg.DialTimeout = min(cfg.DialTimeout, 3*time.Second)
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		log.Warn("schema not checked: ClickHouse out of reach", "err", err)
		return nil
	}
	defer conn.Close()
	unknown, err := analytics.CheckSchema(ctx, conn)
	switch {
	case errors.Is(err, analytics.ErrSchema):
		return fmt.Errorf("database %s: %w", cfg.Database, err)
	case err != nil:
		log.Warn("schema not checked", "err", err)
	case len(unknown) > 0:
		log.Info("the database holds migrations of a later release, which only add: this release serves beside them", "migrations", unknown)
	}
	return nil
}
