package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/egress"
	"github.com/edge-stats/edge/fleet/exchange"
	"github.com/edge-stats/edge/fleet/trust"
)

// serveConfig is what edge serve's flags (and EDGE_* variables) say.
type serveConfig struct {
	ch  analytics.Config
	srv edge.Config
	// The jobs' cron specs ("off": the job does not run on this edge).
	full, refresh, editions, ranks, retention, exportsSchedule string
	zk, zkPath, zkAuth                                         string // the fleet's ZooKeeper, its election's node, and this edge's ZooKeeper credentials
	fleetSalt                                                  string // --fleet-salt: shared or fleet
	fleetToken                                                 string // the fleet's shared secret (keys derived into trust.Keys)
	fleetListen, fleetAdvertise                                string // where this edge serves the fleet's state when it leads
	fleet                                                      exchange.Config
	followEvery                                                time.Duration
	maxEditions, retentionDays, changeDays                     int
	webhookAllow, webhookDeny                                  string
	exports                                                    cron.ExportsConfig
	backoffMin, backoffMax                                     time.Duration
	trusted, exempt                                            string // address ranges, as given
	logFormat, logLevel                                        string
	memLimit, debugListen                                      string
	gcPercent                                                  int
	replaceWait                                                time.Duration
}

// parseServe reads edge serve's flags and checks them.
func parseServe(args []string, stderr io.Writer) (*serveConfig, error) {
	f := newFlags("serve", "Load the listing replica from ClickHouse and answer the API on the listen address.\nThe server listens at once; /readyz answers 503 until the replica is loaded.")
	c := &serveConfig{srv: edge.DefaultConfig(), fleet: exchange.DefaultConfig(),
		exports: cron.ExportsConfig{Dir: "data/exports", Keep: 30, Grace: 2 * time.Hour, PerRun: 2}}
	c.serverFlags(f)
	c.accessFlags(f)
	c.jobFlags(f)
	f.fs.SetOutput(stderr)
	if err := f.parse(args); err != nil {
		return nil, err
	}
	if err := c.resolve(); err != nil {
		return nil, err
	}
	if c.srv.PublicURL == "" {
		c.srv.PublicURL = publicURLOf(c.srv.Listen)
	}
	return c, nil
}

// publicURLOf is the public address of an edge that listens at listen
// and is told no other: its own, so that the links and the pages'
// queries a local user copies reach it (a wildcard address as loopback).
func publicURLOf(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "http://" + listen
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// serverFlags declares the flags of the server: its ClickHouse, its
// address, timeouts and budgets, its caches and bounds, the callers' and
// pages' limits, and the event streams.
func (c *serveConfig) serverFlags(f *envFlags) {
	f.clickhouse(&c.ch)
	f.String(&c.srv.Listen, "listen", c.srv.Listen, "address to listen on")
	f.Duration(&c.srv.ReadTimeout, "read-timeout", c.srv.ReadTimeout, "longest time to read a request")
	f.Duration(&c.srv.WriteTimeout, "write-timeout", c.srv.WriteTimeout, "longest time to write a response")
	f.Duration(&c.srv.IdleTimeout, "idle-timeout", c.srv.IdleTimeout, "how long an idle keep-alive connection stays open")
	f.Duration(&c.srv.ShutdownTimeout, "shutdown-timeout", c.srv.ShutdownTimeout, "how long a graceful stop waits for requests in flight")
	f.Duration(&c.srv.DrainTimeout, "drain-timeout", c.srv.DrainTimeout, "how long a stopping edge keeps its connections, closing each after its next answer, before it closes those still idle")
	f.Duration(&c.replaceWait, "replace-wait", 10*time.Minute, "on SIGUSR2, how long the new process may take to load before the replacement is given up")
	f.Duration(&c.srv.ReadBudget, "read-budget", c.srv.ReadBudget, "longest a per-request ClickHouse read (reviews) may take")
	f.Duration(&c.srv.TextBudget, "text-budget", c.srv.TextBudget, "time budget of a text search (q) on /api/v1/listings; past it the answer is partial")
	f.Duration(&c.srv.SearchBudget, "search-budget", c.srv.SearchBudget, "time budget of a review search in ClickHouse, in whole seconds; past it the answer is partial")
	f.Uint64(&c.srv.SearchMaxRows, "search-max-rows", c.srv.SearchMaxRows, "rows a review search may read in ClickHouse before its answer is partial (0: no bound)")
	f.Int(&c.srv.CacheMB, "cache-mb", c.srv.CacheMB, "size of the encoded-answer cache in MiB")
	f.Int(&c.srv.QueryMinUses, "query-min-uses", c.srv.QueryMinUses, "how many times a query of filters, sorts and pages is asked before its answer is kept in the cache: 2 keeps it on its second ask (queries asked once cost no cache memory), 1 on its first")
	f.Float(&c.srv.Misses.Share, "miss-share", c.srv.Misses.Share, "share of the CPU (GOMAXPROCS) that uncached answers to queries may take while cached answers wait for a core: ceil(GOMAXPROCS × share) at a time, within GOMAXPROCS × share seconds of computing a second; otherwise up to GOMAXPROCS at a time")
	f.Duration(&c.srv.Misses.Wait, "miss-wait", c.srv.Misses.Wait, "longest an uncached answer to a query waits for its turn before it answers 503 Retry-After: 1")
	f.Int(&c.srv.Misses.Queue, "miss-queue", c.srv.Misses.Queue, "uncached answers to queries of one caller (a key, an address or IPv6 /64) that may wait at once, all callers at most this × GOMAXPROCS; past it they answer 503 (after the hold)")
	f.Duration(&c.srv.Misses.Hold, "miss-hold", c.srv.Misses.Hold, "how long after it arrived a refused uncached answer to a query is answered 503 (at a random point between half this and this; eight times that for a caller whose queue overflowed in the last second), so that a client asking again at once cannot take the CPU with refusals (negative: at once)")
	f.Int(&c.srv.MaxURIBytes, "max-uri-bytes", c.srv.MaxURIBytes, "longest request URI; longer ones answer 414")
	f.Int(&c.srv.MaxHeaderBytes, "max-header-bytes", c.srv.MaxHeaderBytes, "largest request line and headers together, read into a buffer of this size a connection; larger ones answer 431")
	f.Int(&c.srv.MaxBodyBytes, "max-body-bytes", c.srv.MaxBodyBytes, "largest request body (/mcp, /account); larger ones answer 413")
	f.String(&c.srv.PublicURL, "public-url", "", "the service's public address, for links (the CSV's url column, the pages' DuckDB queries); empty: http:// and the listen address (loopback for a wildcard)")
	f.String(&c.trusted, "trusted-proxies", "", "comma-separated addresses or CIDR ranges of proxies whose header (--client-header) names the client")
	f.Int(&c.srv.IPv6Prefix, "ipv6-prefix", c.srv.IPv6Prefix, "leading bits of an IPv6 address that name one caller for every per-address limit (a host gets a /64 as easily as one address)")
	f.String(&c.srv.ClientHeader, "client-header", "x-forwarded-for", "the header the trusted proxies name the client in: x-forwarded-for (every line read) or forwarded (RFC 7239); read only the one they write")
	f.Float(&c.srv.FairUseRate, "fair-use-rate", c.srv.FairUseRate, "legacy API: requests a second per address (0 turns fair use off)")
	f.Int(&c.srv.FairUseBurst, "fair-use-burst", c.srv.FairUseBurst, "legacy API: requests an address may make at once")
	f.String(&c.exempt, "fair-use-exempt", "", "comma-separated addresses or CIDR ranges without fair use, on the legacy API and the pages (a CDN's)")
	f.Float(&c.srv.PageRate, "page-rate", c.srv.PageRate, "HTML pages (/listings/{store}/{id}, /definitions) a second per address, past the burst; a refused page is an HTML page saying when to come back (0: no bound)")
	f.Int(&c.srv.PageBurst, "page-burst", c.srv.PageBurst, "HTML pages an address may ask for at once")
	f.Int(&c.srv.Limits.Anonymous.PerMinute, "anon-per-minute", c.srv.Limits.Anonymous.PerMinute, "v1 calls a minute per address without a key")
	f.Uint64(&c.srv.Limits.Anonymous.PerDay, "anon-per-day", c.srv.Limits.Anonymous.PerDay, "v1 calls a UTC day per address without a key")
	f.Int(&c.srv.Limits.Keyed.PerMinute, "key-per-minute", c.srv.Limits.Keyed.PerMinute, "v1 calls a minute per key")
	f.Uint64(&c.srv.Limits.Keyed.PerDay, "key-per-day", c.srv.Limits.Keyed.PerDay, "v1 calls a UTC day per key, unless raised for the key (edge key limit)")
	f.Int(&c.srv.Stream.PerKey, "stream-per-key", c.srv.Stream.PerKey, "event streams (GET /api/v1/events/stream) one key may hold open on this edge")
	f.Int(&c.srv.Stream.Total, "stream-total", c.srv.Stream.Total, "event streams this edge holds open at most")
	f.Int(&c.srv.Stream.Buffer, "stream-buffer", c.srv.Stream.Buffer, "bytes of events queued for one stream's client before it is cut for reading too slowly (it resumes with Last-Event-ID)")
	f.Duration(&c.srv.Stream.Heartbeat, "stream-heartbeat", c.srv.Stream.Heartbeat, "how often a stream with nothing to send sends a comment, so that proxies keep it open")
	f.Duration(&c.srv.Stream.MaxAge, "stream-max-age", c.srv.Stream.MaxAge, "a stream ends after it, and its client reconnects with Last-Event-ID (spreads streams over a fleet's edges after a deploy)")
}

// accessFlags declares the flags of the webhooks, the limits and keys,
// the replay path and the accounts' sign-in.
func (c *serveConfig) accessFlags(f *envFlags) {
	f.String(&c.srv.Webhooks.Key, "webhook-key", "", "32 random bytes, base64 (openssl rand -base64 32), the same on every edge: seals the webhooks' signing secrets in ClickHouse (set it as EDGE_WEBHOOK_KEY: a flag shows in the process list); empty: webhooks are off (/account/webhooks answers 503)")
	f.Bool(&c.srv.Webhooks.Deliver, "webhook-deliver", true, "deliver the webhooks while this edge leads its fleet (with --zk), or always (without); off on all but one edge of a fleet without ZooKeeper")
	f.String(&c.webhookAllow, "webhook-allow", "", "comma-separated addresses or CIDR ranges, best each with its receiver's port, that webhooks may reach although not public (such as 127.0.0.1:9999 for a receiver on this host); every other loopback, private, link-local and reserved address is refused, and so are this edge's own services (its listen, fleet and debug addresses, its ClickHouse's and ZooKeeper's hosts on their ports and their usual ones, and --webhook-deny) whatever this says, at every address that reaches them however they are named (a service on this host at every loopback, unspecified and interface address); any other port of those hosts only when named here with its very address (127.0.0.1:9999, not 127.0.0.0/8)")
	f.String(&c.webhookDeny, "webhook-deny", "", "comma-separated addresses or CIDR ranges with a port or none (10.0.0.7:8123) that webhooks never reach, whatever --webhook-allow says: services of this edge's network on ports it cannot know")
	f.Bool(&c.srv.Webhooks.Policy.AllowHTTP, "webhook-allow-http", false, "admit http:// webhook URLs (only https:// otherwise)")
	f.Int(&c.srv.Webhooks.PerAccount, "webhooks-per-account", 10, "webhook endpoints one account may register")
	f.Int(&c.srv.Webhooks.Workers, "webhook-workers", 64, "deliveries at once to endpoints that answer")
	f.Int(&c.srv.Webhooks.RetryWorkers, "webhook-retry-workers", 8, "deliveries at once to endpoints that fail (apart, so that they cost the others nothing)")
	f.Duration(&c.srv.Webhooks.Timeout, "webhook-timeout", 10*time.Second, "how long one delivery may take: connecting, sending and the answer")
	f.Duration(&c.srv.Webhooks.FirstTimeout, "webhook-first-timeout", 2*time.Second, "how long an event's first attempt may take (by the workers of endpoints that answer); past it the endpoint waits for the retry lane, which allows --webhook-timeout")
	f.Int(&c.srv.Limits.InvalidKeys, "invalid-keys", c.srv.Limits.InvalidKeys, "invalid keys a minute from one address before its keys are refused unread (429)")
	f.Int(&c.srv.Limits.SearchSlots, "search-slots", c.srv.Limits.SearchSlots, "searches running at once across every caller (the search pool)")
	f.Float(&c.srv.Limits.SearchRate, "search-rate", c.srv.Limits.SearchRate, "searches started a second across every caller (0: no bound)")
	f.Int(&c.srv.Limits.MaxActive, "limits-max-active", c.srv.Limits.MaxActive, "most callers held with their minute's window (about 512 bytes each); past it, idle callers are evicted first, and never one whose day calls are not all in the fleet's totals")
	f.Int(&c.srv.Limits.MaxSubjects, "limits-max-subjects", c.srv.Limits.MaxSubjects, "most callers of the day held in the fleet's totals (about 40 bytes each); past it, those with the fewest calls are folded into a floor that never admits a call past a day")
	f.Int(&c.srv.Limits.MaxAddresses, "limits-max-addresses", c.srv.Limits.MaxAddresses, "most addresses held by the invalid-key counter (about 320 bytes each)")
	f.Duration(&c.srv.Limits.StaleAfter, "usage-stale-after", c.srv.Limits.StaleAfter, "age of the fleet's daily usage past which v1 calls answer 503 (ClickHouse out of reach)")
	f.Duration(&c.srv.UsageEvery, "usage-every", c.srv.UsageEvery, "how often counted calls are flushed to ClickHouse and the fleet's totals read back")
	f.Duration(&c.srv.KeysEvery, "keys-every", c.srv.KeysEvery, "how often the key list is reloaded (a new or revoked key takes effect within it); at most 30s")
	f.Bool(&c.srv.Replay, "replay", c.srv.Replay, "answer a cached answer's repeated requests on the raw connection from a record of its answer, before fasthttp and fiber read them (needs --raw-io; docs/operations.md, The replay path); false: every request takes the full path, the same bytes")
	f.Bool(&c.srv.RawIO, "raw-io", c.srv.RawIO, "accepted connections read and write by raw system calls and send large answers by sendfile (Linux amd64 and arm64); false: the standard library's connections, the same bytes")
	f.Bool(&c.srv.NoLimits, "no-limits", false, "serve /api/v1 without keys and limits: only for an internal edge behind a gateway that applies them, or to benchmark their cost")
	f.Int(&c.srv.SignInFailures, "signin-failures", c.srv.SignInFailures, "failed sign-ins to /account at one e-mail address from one client address in 15 minutes before they are throttled (three times as many from one address at any)")
	f.Int(&c.srv.SignInEmailFailures, "signin-email-failures", c.srv.SignInEmailFailures, "failed sign-ins to /account at one e-mail address from every client address together in 15 minutes before it is throttled")
	f.Duration(&c.srv.HashWait, "hash-wait", c.srv.HashWait, "how long a sign-in or sign-up waits for a password hashing slot before it answers 503")
	f.Duration(&c.srv.CountWait, "count-wait", c.srv.CountWait, "how long a sign-in or sign-up waits for the fleet's count of attempts (a claim to the leading edge, or a sign-up's decision on the fleet's log, behind the same address's decisions) before this edge decides alone, or answers 503")
}

// jobFlags declares the flags of the jobs (their schedules), the fleet,
// the exports, and the process (logs, memory, profiles).
func (c *serveConfig) jobFlags(f *envFlags) {
	f.String(&c.full, "full-schedule", "7 * * * *", "cron spec (UTC) of the full reload of listings, history and figures")
	f.String(&c.refresh, "refresh-schedule", "*/5 * * * *", "cron spec (UTC) of the incremental refresh of changed listings")
	f.String(&c.editions, "editions-schedule", "10 0 * * 1", "cron spec (UTC) of the weekly editions build (after each ISO week ends); off: no editions (/api/v1/week answers 503)")
	f.String(&c.ranks, "ranks-schedule", "20 * * * *", "cron spec (UTC) of the daily store ranks of listing histories (days not ranked yet or with new crawls); off on all but one edge of a fleet without ZooKeeper (with --zk, only the leading edge runs it)")
	f.String(&c.zk, "zk", "", "ZooKeeper servers host:port, comma separated: the edges of a fleet elect one to run the jobs a fleet needs once (ranks, usage retention, building editions)")
	f.String(&c.zkPath, "zk-path", "", "ZooKeeper node of the fleet's election (default /edge/fleets/<ClickHouse database>)")
	f.String(&c.fleetListen, "fleet-listen", "", "with --zk: a private address (such as 10.0.0.5:8081) where this edge, while it leads, serves the state it loaded to the fleet's other edges, which load it from there instead of from ClickHouse (docs/operations.md, A fleet of edges); empty: every edge loads from ClickHouse")
	f.String(&c.fleetAdvertise, "fleet-advertise", "", "the URL the other edges reach --fleet-listen at (default: https:// and --fleet-listen, with this host's name when it names no host)")
	f.String(&c.fleet.Dir, "fleet-dir", c.fleet.Dir, "where the leading edge keeps the snapshot of its state it serves")
	f.Int(&c.fleet.Sends, "fleet-sends", c.fleet.Sends, "snapshots the leading edge sends at once; past it an edge is told to come back")
	f.Duration(&c.fleet.Patience, "fleet-patience", c.fleet.Patience, "how long an edge without a state waits for a leader that has none yet before it loads from ClickHouse itself")
	f.Secret(&c.fleetToken, "fleet-token", "the fleet's shared secret, random (make one with: edge fleet token), the same on every edge (set it as EDGE_FLEET_TOKEN: a flag shows in the process list). It is never sent: the edges derive from it the certificates of their fleet addresses (TLS both ways), the signature of each state and of each election node (docs/operations.md, Trust within a fleet); with it an edge that follows also reads the usage log's changes from the leader instead of ClickHouse. Needed with --zk; a token a guesser would find (under 128 bits by the zxcvbn estimator: words, repeated blocks, sequences, keyboard walks, or shorter than 39 characters) is refused")
	f.String(&c.fleetSalt, "fleet-salt", "shared", "the salt the fleet's keys are signed with: shared (the fixed salt of every release, which earlier releases read) or fleet (the fleet's own, its election path: a table of guessed tokens made for one fleet serves no other). Either way an edge trusts both, so a fleet moves to fleet one edge at a time once every edge runs this release (docs/operations.md, The salt)")
	f.Secret(&c.zkAuth, "zk-auth", "ZooKeeper digest credentials user:password (set it as EDGE_ZK_AUTH): the election's path and nodes are made readable and writable by them alone")
	f.Int64(&c.fleet.MaxBytes, "fleet-max-bytes", c.fleet.MaxBytes, "largest state, compressed and uncompressed, an edge takes from its fleet's leader")
	f.Int(&c.fleet.Deltas, "fleet-deltas", c.fleet.Deltas, "deltas the leading edge keeps (what changed from each of its last states to the next): an edge that holds one of those states takes what changed, one further behind the whole state; 0: whole states only")
	f.Duration(&c.fleet.WholeAfter, "fleet-whole-after", c.fleet.WholeAfter, "how long after a state's delta the leading edge writes the state whole (counted from the first state not written whole): its followers take the delta and build first, on cores the whole state's compression does not take, and an edge that needs the whole meanwhile takes the one before and the deltas since; 0: at once")
	f.Duration(&c.followEvery, "follow-every", 10*time.Second, "how often an edge that follows its fleet's leader asks it for a newer state (a 304 when there is none)")
	f.Int(&c.changeDays, "change-days", 180, "days of listings' metadata changes the edge keeps in memory for the changelog and event feed (/api/v1/listings/{store}/{id}/changes, /api/v1/events), counted back from the newest metadata crawl")
	f.Int(&c.maxEditions, "max-editions", 260, "most weekly editions kept built, newest first")
	f.String(&c.retention, "usage-retention-schedule", "30 3 * * *", "cron spec (UTC) of the job that drops old days of the usage table; off: none (keep every day)")
	f.Int(&c.retentionDays, "usage-retention-days", 35, "days of the usage table kept (the day's count is all the limits need)")
	f.String(&c.exportsSchedule, "exports-schedule", "40 * * * *", "cron spec (UTC) of the job that builds the daily exports of the days closed since (at most two a run) and prunes old ones; off: none on this edge (/api/v1/exports answers 503)")
	f.String(&c.exports.Dir, "exports-dir", c.exports.Dir, "directory of the daily exports: this edge's own, or one shared by the fleet (each day is built once and published by an atomic rename)")
	f.Int(&c.exports.Keep, "exports-keep", c.exports.Keep, "days of exports kept")
	f.Duration(&c.exports.Grace, "exports-grace", c.exports.Grace, "how long after a day's end its late readings are awaited before the day is exported")
	f.Duration(&c.backoffMin, "retry-min", time.Second, "first wait before a failed job is retried")
	f.Duration(&c.backoffMax, "retry-max", time.Minute, "longest wait between retries of a failed job")
	f.String(&c.logFormat, "log-format", "text", "log format: text or json")
	f.String(&c.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	f.String(&c.memLimit, "memory-limit", "auto", "the memory the edge may use, such as 12GiB: the Go heap's soft limit is set to it less a tenth and the answer cache (auto: the cgroup's memory limit; off: none; GOMEMLIMIT, when set, wins)")
	f.Int(&c.gcPercent, "gc-percent", 25, "the Go collector's GOGC: how far the heap may grow past the live state before a collection. The state is large and long-lived and requests allocate little, so a low value costs little CPU and keeps RSS near the live heap; a fleet's edges raise it between builds, to keep the pages of the next (GOGC, when set, wins)")
	f.String(&c.debugListen, "debug-listen", "", "address of Go's profiles (/debug/pprof/), such as 127.0.0.1:6060; empty: none. Loopback or private only")
}

// resolve checks the flags parsed together and derives what they name:
// the fleet's keys, the webhooks' address rules, the trusted proxies.
func (c *serveConfig) resolve() error {
	var err error
	switch {
	case c.changeDays < 1 || c.changeDays > 3650:
		return fmt.Errorf("--change-days %d: use a number of days from 1 to 3650", c.changeDays)
	case c.srv.KeysEvery <= 0 || c.srv.KeysEvery > 30*time.Second:
		return fmt.Errorf("--keys-every %v: use a duration from 1ms to 30s", c.srv.KeysEvery)
	case c.srv.UsageEvery <= 0 || c.srv.Limits.StaleAfter < 2*c.srv.UsageEvery:
		return fmt.Errorf("--usage-every %v and --usage-stale-after %v: syncs must be positive and at least twice as frequent as the staleness bound", c.srv.UsageEvery, c.srv.Limits.StaleAfter)
	case c.srv.QueryMinUses != 1 && c.srv.QueryMinUses != 2:
		return fmt.Errorf("--query-min-uses %d: use 1 (keep every answer) or 2 (keep an answer on its second ask)", c.srv.QueryMinUses)
	case os.Getenv("GOGC") == "" && c.gcPercent < 1:
		return fmt.Errorf("--gc-percent %d: use a positive percentage (GOGC=off turns the collector off, which an edge should not)", c.gcPercent)
	case c.retention != "off" && c.retentionDays < 1:
		return fmt.Errorf("--usage-retention-days %d: keep at least today (1)", c.retentionDays)
	case c.exportsSchedule != "off" && c.exports.Keep < 1:
		return fmt.Errorf("--exports-keep %d: keep at least one day", c.exports.Keep)
	case c.fleetListen != "" && c.zk == "":
		return fmt.Errorf("--fleet-listen %s: a fleet's leader is elected through ZooKeeper: set --zk too", c.fleetListen)
	case c.fleetListen != "" && c.followEvery < time.Second:
		return fmt.Errorf("--follow-every %v: ask the leader at most once a second", c.followEvery)
	case c.zk != "" && c.fleetToken == "":
		return fmt.Errorf("--zk %s: a fleet needs its token: set EDGE_FLEET_TOKEN, the same on every edge of the fleet "+
			"(make one with: edge fleet token), without which any process that reaches ZooKeeper or a fleet address "+
			"could read the fleet's state, forge it and take the lead", c.zk)
	}
	salt, err := trust.ParseSalt(c.fleetSalt)
	if err != nil {
		return fmt.Errorf("--fleet-salt (EDGE_FLEET_SALT): %w", err)
	}
	if c.fleetToken != "" {
		// The strength check first: its refusal opens with what to set
		// (it names EDGE_FLEET_TOKEN and the command that makes one),
		// then says why this token is refused, a short one's length
		// with the length that passes.
		if err := checkFleetToken(c.fleetToken); err != nil {
			return err
		}
		if c.fleet.Keys, err = trust.NewFor(c.fleetToken, c.electionPath(), salt); err != nil {
			return fmt.Errorf("EDGE_FLEET_TOKEN: %w", err)
		}
	}
	if c.srv.Webhooks.Policy.Allow, err = egress.ParseRules(c.webhookAllow); err != nil {
		return fmt.Errorf("--webhook-allow: %w", err)
	}
	if c.srv.Webhooks.Policy.Deny, err = egress.ParseRules(c.webhookDeny); err != nil {
		return fmt.Errorf("--webhook-deny: %w", err)
	}
	if c.srv.TrustedProxies, err = clientip.ParsePrefixes(c.trusted); err != nil {
		return fmt.Errorf("--trusted-proxies: %w", err)
	}
	if c.srv.FairUseExempt, err = clientip.ParsePrefixes(c.exempt); err != nil {
		return fmt.Errorf("--fair-use-exempt: %w", err)
	}
	return checkServe(c)
}
