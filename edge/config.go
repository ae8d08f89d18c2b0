package edge

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge/account"
	"github.com/edge-stats/edge/edge/attempts"
	"github.com/edge-stats/edge/edge/claims"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/keys"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/pages/guard"
	"github.com/edge-stats/edge/edge/stream"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/edge/webhooks"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/served"
)

// Config holds the server's settings.
type Config struct {
	Listen          string        // address to listen on
	ReadTimeout     time.Duration // whole request, headers and body
	WriteTimeout    time.Duration // whole response
	IdleTimeout     time.Duration // keep-alive connections
	ShutdownTimeout time.Duration // how long a graceful stop may wait for requests in flight
	// DrainTimeout is how long a stopping server keeps its open
	// connections, answering each one's next request with Connection:
	// close, before it closes those still idle (a client's next request
	// then goes to the process that took over the listener).
	DrainTimeout   time.Duration
	CacheMB        int               // answer cache size in MiB
	QueryMinUses   int               // asks of a query of the long tail before its answer is kept: 1 or 2 (the default; answer.Cache.SetMinUses)
	PublicURL      string            // the service's public address, for links such as the CSV's url column
	TrustedProxies clientip.Prefixes // connections from these may name the client in ClientHeader
	ClientHeader   string            // the header trusted proxies name the client in: x-forwarded-for (default) or forwarded (RFC 7239)
	IPv6Prefix     int               // leading bits of an IPv6 address that name one caller for every per-address limit (default 64)
	FairUseRate    float64           // legacy API: requests a second per address (0 turns it off)
	FairUseBurst   int               // legacy API: requests an address may make at once
	FairUseExempt  clientip.Prefixes // legacy API and pages: addresses without fair use, such as a CDN's
	// PageRate and PageBurst bound the HTML pages per address: pages a
	// second, and at once (package pages/guard).
	PageRate       float64
	PageBurst      int
	PublicMaxAge   time.Duration   // legacy API: max-age of its public Cache-Control
	ReadBudget     time.Duration   // longest a per-request ClickHouse read may take
	TextBudget     time.Duration   // time budget of q on /api/v1/listings, searched in memory
	SearchBudget   time.Duration   // time budget of review searches in ClickHouse (whole seconds on 18.16)
	SearchMaxRows  uint64          // rows a review search may read in ClickHouse (0: no bound)
	Limits         limits.Config   // the v1 API's limits and search pool
	Webhooks       webhooks.Config // the webhooks (off without a key)
	Stream         stream.Config   // the event streams' bounds (zero fields: their defaults)
	NoLimits       bool            // serve v1 without keys and limits (an internal edge behind a gateway that applies them; benchmarks)
	SDKOnlyTools   bool            // answer every /mcp request through the MCP SDK, without the fast tools/call path (for comparison)
	KeysEvery      time.Duration   // how often the key list is reloaded from ClickHouse
	UsageEvery     time.Duration   // how often the day's usage is flushed to ClickHouse and the fleet's totals read back
	SignInFailures int             // failed sign-ins at one e-mail address from one client address in SignInWindow (a client address may fail three times as many at any)
	SignInWindow   time.Duration   // the window of the sign-in limits
	// SignInEmailFailures is the failed sign-ins at one e-mail address
	// from every client address together in SignInWindow.
	SignInEmailFailures int
	// HashWait is how long a sign-in or sign-up waits for a password
	// hashing slot before it answers 503.
	HashWait time.Duration
	// CountWait is how long a sign-in or sign-up waits for the fleet's
	// count of attempts (a claim to the leader, or a sign-up's decision
	// on the fleet's log) before this edge decides alone, or answers 503.
	CountWait time.Duration
	SignUps   int  // accounts one client address may make an hour
	RawIO     bool // accepted connections use raw system calls and sendfile (package transport); false: the standard library's
	// Replay answers a cached answer's repeated requests on the raw
	// connection, before fasthttp and fiber read them, from a record of
	// the slow path's answer (package replay; needs RawIO).
	Replay bool
	// The bounds of a request: its URI (414 past it), its request line
	// and headers together (431), its body (413). The request line and
	// headers are read into a buffer of MaxHeaderBytes a connection.
	MaxURIBytes, MaxHeaderBytes, MaxBodyBytes int
	// NoPrecompress turns off the encoding of the published answers at the
	// best level after each publish (they are then compressed at the fast
	// level when first asked for in a coding); for tests.
	NoPrecompress bool
	// Misses bounds the uncached answers to queries (listings, legacy
	// pages, CSV) computed at once: their share of the CPU and how long
	// one waits for its turn (package missgate).
	Misses missgate.Config
}

// DefaultConfig returns the settings used when none are given.
func DefaultConfig() Config {
	return Config{
		Stream:              stream.Config{}.Defaults(),
		Listen:              "127.0.0.1:8080",
		ReadTimeout:         10 * time.Second,
		WriteTimeout:        30 * time.Second,
		IdleTimeout:         2 * time.Minute,
		ShutdownTimeout:     15 * time.Second,
		DrainTimeout:        5 * time.Second,
		CacheMB:             256,
		QueryMinUses:        2,
		PublicURL:           "http://127.0.0.1:8080",
		FairUseRate:         1,
		FairUseBurst:        20,
		PageRate:            guard.Default().Rate,
		PageBurst:           guard.Default().Burst,
		PublicMaxAge:        time.Minute,
		ReadBudget:          2 * time.Second,
		TextBudget:          100 * time.Millisecond,
		SearchBudget:        time.Second,
		SearchMaxRows:       200_000_000,
		Limits:              limits.DefaultConfig(),
		Misses:              missgate.DefaultConfig(),
		KeysEvery:           10 * time.Second,
		UsageEvery:          2 * time.Second,
		SignInFailures:      10,
		SignInWindow:        15 * time.Minute,
		SignInEmailFailures: 100,
		HashWait:            keys.HashWait,
		CountWait:           account.DefaultCountWait,
		SignUps:             5,
		RawIO:               true,
		Replay:              true,
		IPv6Prefix:          clientip.DefaultIPv6Prefix,
		MaxURIBytes:         8 << 10,
		MaxHeaderBytes:      16 << 10,
		MaxBodyBytes:        1 << 20,
	}
}

// Sources are what the server answers from: the published states, and the
// background jobs' status for /readyz and /metrics.
type Sources struct {
	State    *views.Published[served.State]
	Editions *views.Published[editions.Set]
	Jobs     func() []cron.Status // may be nil
	DB       *analytics.Lazy      // for reads that go to ClickHouse per request (history, reviews, accounts); may be nil
	// SyncDB is the pool of the usage sync and of the keys' refresh, apart
	// from DB so that slow per-request reads cannot starve them (nil: DB).
	SyncDB *analytics.Lazy
	Usage  usagelog.Store // the fleet's daily usage; nil: the usage tables of SyncDB
	// Attempts is the fleet's log of the account routes' attempts (sign-
	// ups, failed sign-ins), which their limits count; nil: the attempts
	// log of SyncDB.
	Attempts attempts.Store
	// Claims, when set, sends each account attempt to the fleet's
	// leading edge while another edge leads (package claims): a following
	// edge of a fleet. The leader's side is Server.ClaimsHandler.
	Claims *claims.Client
	// KeysGate, when set, decides on each tick whether to reload the
	// keys (a following edge of a fleet: package relay); its ticks are
	// then at least once a second, each reload still at most every
	// KeysEvery unless the leader's list changed.
	KeysGate keys.Gate
	// Exports are the daily bulk exports to list and serve (nil: none).
	Exports v1.Exports
	// Leading says whether this edge leads its fleet, for the work a
	// fleet does once (webhook deliveries); nil: it does (alone).
	Leading func() bool
	// Epoch is the epoch of this edge's lead (package fleet/leader), which
	// fences what an earlier leader writes late (nil: 0).
	Epoch func() int64
	// Fleet, when set, returns what this edge knows of its fleet's leader
	// (a JSON value: exchange.Status), shown in /readyz as "fleet".
	Fleet func() any
	// Collectors are metrics of the edge's other parts (its fleet's) to
	// serve on /metrics.
	Collectors []prometheus.Collector
	// Building returns a channel closed once the state the edge is
	// reading or building is published, or nil while it builds none
	// (builder.Builder.Building): the answers' precompression waits for it
	// between answers (nil: it never waits).
	Building func() <-chan struct{}
}
