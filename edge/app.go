package edge

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/account"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/apidocs"
	"github.com/edge-stats/edge/edge/apikey"
	"github.com/edge-stats/edge/edge/attempts"
	"github.com/edge-stats/edge/edge/claims"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/keys"
	"github.com/edge-stats/edge/edge/legacy"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/pages"
	"github.com/edge-stats/edge/edge/pages/guard"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/replay"
	"github.com/edge-stats/edge/edge/stream"
	"github.com/edge-stats/edge/edge/transport"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/edge/webhooks"
	"github.com/edge-stats/edge/mcp"
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
	SignUps  int  // accounts one client address may make an hour
	RawIO    bool // accepted connections use raw system calls and sendfile (package transport); false: the standard library's
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
	Usage  limits.Store // the fleet's daily usage; nil: the usage tables of SyncDB
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
	// Epoch is the epoch of this edge's lead (package cron/leader), which
	// fences what an earlier leader writes late (nil: 0).
	Epoch func() int64
	// Fleet, when set, returns what this edge knows of its fleet's leader
	// (a JSON value: fleet.Status), shown in /readyz as "fleet".
	Fleet func() any
	// Collectors are metrics of the edge's other parts (its fleet's) to
	// serve on /metrics.
	Collectors []prometheus.Collector
	// Building returns a channel closed once the state the edge is
	// reading or building is published, or nil while it builds none
	// (cron.Views.Building): the answers' precompression waits for it
	// between answers (nil: it never waits).
	Building func() <-chan struct{}
}

// Server is the edge's HTTP server: it wires the APIs (packages v1,
// legacy, account and the tool server) to one fiber app behind metrics,
// panic recovery and problem+json errors.
type Server struct {
	cfg    Config
	log    *slog.Logger
	state  *views.Published[served.State]
	stream *stream.Hub // the event streams
	// deliverer delivers the webhooks (nil: not on this edge).
	deliverer *webhooks.Deliverer
	editions  *views.Published[editions.Set]
	jobs      func() []cron.Status
	fleet     func() any             // Sources.Fleet, nil: none
	building  func() <-chan struct{} // Sources.Building, nil: none
	app       *fiber.App
	metrics   *metrics
	answers   *answer.Cache
	replay    *replay.Table // nil without the replay path
	misses    *missgate.Gate
	keys      *keys.Registry
	accounts  *account.API
	keysTick  time.Duration // the keys' reload tick when a gate decides (0: KeysEvery)
	limits    *limits.Limiter
	gate      *access.Gate
	v1        *v1.API
	tools     *mcp.Server
	handler   fasthttp.RequestHandler // the app's, for the tool server's internal reads
	// internalCtxs are request contexts for the tool server's reads.
	internalCtxs sync.Pool
	// draining is set once the server stops accepting: every answer then
	// closes its connection.
	draining atomic.Bool
}

// New returns a server answering from src.
func New(cfg Config, src Sources, log *slog.Logger) (*Server, error) {
	if src.Editions == nil {
		src.Editions = &views.Published[editions.Set]{}
	}
	if src.Jobs == nil {
		src.Jobs = func() []cron.Status { return nil }
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.KeysEvery <= 0 {
		cfg.KeysEvery = DefaultConfig().KeysEvery
	}
	if cfg.UsageEvery <= 0 {
		cfg.UsageEvery = DefaultConfig().UsageEvery
	}
	if cfg.MaxURIBytes <= 0 || cfg.MaxHeaderBytes <= 0 || cfg.MaxBodyBytes <= 0 {
		d := DefaultConfig()
		cfg.MaxURIBytes, cfg.MaxHeaderBytes, cfg.MaxBodyBytes = cmp.Or(max(cfg.MaxURIBytes, 0), d.MaxURIBytes),
			cmp.Or(max(cfg.MaxHeaderBytes, 0), d.MaxHeaderBytes), cmp.Or(max(cfg.MaxBodyBytes, 0), d.MaxBodyBytes)
	}
	answers, err := answer.NewCache(int64(cfg.CacheMB) << 20)
	if err != nil {
		return nil, err
	}
	answers.SetMinUses(cmp.Or(cfg.QueryMinUses, 2))
	misses := missgate.New(cfg.Misses)
	answers.SetGate(misses)
	// An answer's Last-Modified: the newest reading of the state it was
	// built from (docs/api-v1.md, Caching).
	answers.SetModified(func() time.Time {
		if st := src.State.Load(); st != nil {
			return st.Replica.Info().ReadingsMark
		}
		return time.Time{}
	})
	if src.DB == nil {
		src.DB = analytics.NewLazy(analytics.DefaultConfig())
	}
	if src.SyncDB == nil {
		src.SyncDB = src.DB
	}
	if src.Usage == nil {
		src.Usage = limits.ClickHouse(src.SyncDB)
	}
	if src.Attempts == nil {
		src.Attempts = attempts.ClickHouse(src.SyncDB)
	}
	forwarded, err := clientip.ParseHeader(cfg.ClientHeader)
	if err != nil {
		return nil, fmt.Errorf("client header: %w", err)
	}
	if cfg.IPv6Prefix < 0 || cfg.IPv6Prefix > 128 {
		return nil, fmt.Errorf("IPv6 prefix /%d: use 32 to 128 (a caller is its /64 by default)", cfg.IPv6Prefix)
	}
	proxies := clientip.Proxies{Trusted: cfg.TrustedProxies, Forwarded: forwarded, IPv6Prefix: cfg.IPv6Prefix}
	s := &Server{cfg: cfg, log: log, state: src.State, editions: src.Editions, jobs: src.Jobs, fleet: src.Fleet, building: src.Building, answers: answers, misses: misses}
	s.keys = keys.NewRegistry(src.SyncDB)
	if src.KeysGate != nil {
		s.keys.SetGate(src.KeysGate)
		s.keysTick = time.Second
	}
	s.limits = limits.New(cfg.Limits, src.Usage)
	s.gate = access.New(access.Config{Proxies: proxies, InvalidKeys: cfg.Limits.InvalidKeys}, s.keys, s.limits)
	s.stream = stream.NewHub(cfg.Stream, src.State, v1.EncodeEvent)
	s.v1, err = v1.New(v1.Config{ReadBudget: cfg.ReadBudget, TextBudget: cfg.TextBudget, SearchBudget: cfg.SearchBudget, PublicURL: cfg.PublicURL,
		SearchMaxRows: cfg.SearchMaxRows}, v1.Sources{State: src.State, Editions: src.Editions, DB: src.DB, Answers: answers,
		Gate: s.gate, Log: log, Exports: src.Exports, Stream: s.stream})
	if err != nil {
		return nil, err
	}
	s.metrics = newMetrics(s)
	if err := s.metrics.reg.Register(collectorsOf(src.Collectors)); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	s.app = fiber.New(fiber.Config{
		AppName:               "edge",
		ErrorHandler:          s.requestBoundsProblem(guard.Pages(log, problem.Handler(log))),
		ReadBufferSize:        cfg.MaxHeaderBytes,
		BodyLimit:             cfg.MaxBodyBytes,
		DisableStartupMessage: true,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		JSONEncoder:           json.Marshal,
		StrictRouting:         false,
		CaseSensitive:         true,
	})
	// An event stream's answer lasts up to its MaxAge: its write deadline
	// is that and a minute, not WriteTimeout (every other answer's). The
	// stream closes a client whose write waits past the stream's own
	// WriteTimeout itself (package stream).
	streamConfig := fasthttp.RequestConfig{WriteTimeout: s.stream.Config().MaxAge + time.Minute}
	streamPath := []byte(stream.StreamPath)
	s.app.Server().HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if bytes.HasPrefix(h.RequestURI(), streamPath) {
			return streamConfig
		}
		return fasthttp.RequestConfig{}
	}
	s.app.Use(s.metrics.observe)
	s.app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		log.Error("panic in handler", "method", c.Method(), "path", apikey.Redact(c.Path()), "panic", e)
	}}))
	s.app.Use(s.checkURI)
	s.app.Get("/healthz", s.healthz)
	s.app.Get("/readyz", s.readyz)
	s.app.Get("/metrics", s.metrics.handler())
	var limit fiber.Handler
	if !cfg.NoLimits {
		limit = s.gate.Limit
	}
	s.app.Use("/api", apiCORS) // both APIs, before their keys and limits
	respond := s.responder()
	s.v1.Routes(s.app.Group("/api/v1"), limit, respond)
	pg, err := pages.New(pages.Config{ReadBudget: cfg.ReadBudget, PublicURL: cfg.PublicURL},
		pages.Sources{API: s.v1, State: src.State, Editions: src.Editions, DB: src.DB, Answers: answers, Log: log})
	if err != nil {
		return nil, err
	}
	pg.Routes(s.app, guard.New(guard.Config{Rate: cfg.PageRate, Burst: cfg.PageBurst, Exempt: cfg.FairUseExempt, Proxies: proxies}).Handler, respond)
	legacy.New(legacy.Config{PublicURL: cfg.PublicURL, PublicMaxAge: cfg.PublicMaxAge, FairUseRate: cfg.FairUseRate,
		FairUseBurst: cfg.FairUseBurst, FairUseExempt: cfg.FairUseExempt, Proxies: proxies, TextBudget: cfg.TextBudget},
		legacy.Sources{State: src.State, Answers: answers, Search: s.gate.SearchSlot, Caller: s.gate.MissCaller, Log: log}).Routes(s.app, respond)
	accounts := keys.NewAccounts(src.DB, runtime.GOMAXPROCS(0), nil)
	accounts.Wait = cfg.HashWait
	acc := account.New(account.Config{SignInFailures: cfg.SignInFailures, SignInEmailFailures: cfg.SignInEmailFailures, SignInWindow: cfg.SignInWindow,
		SignUps: cfg.SignUps, DefaultDailyLimit: cfg.Limits.Keyed.PerDay, Proxies: proxies, ReloadBudget: cfg.ReadBudget + 5*time.Second,
		MaxAddresses: cfg.Limits.MaxAddresses, Shared: src.Attempts, Fleet: src.Claims, PublicURL: cfg.PublicURL},
		accounts, s.keys, log)
	acc.Routes(s.app)
	s.accounts = acc
	for _, c := range acc.Collectors() {
		if err := s.metrics.reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	hooks, err := webhooks.NewAPI(cfg.Webhooks, acc.SignIn, src.DB, src.State, log)
	if err != nil {
		return nil, err
	}
	hooks.Routes(s.app)
	if cfg.Webhooks.Key != "" && cfg.Webhooks.Deliver && src.DB != nil {
		if s.deliverer, err = webhooks.NewDeliverer(cfg.Webhooks, src.DB, src.State, webhooks.Lead{Leading: src.Leading, Epoch: src.Epoch}, log); err != nil {
			return nil, err
		}
	}
	apidocs.Routes(s.app, respond)
	if err := s.mountTools(v1.Version); err != nil {
		return nil, err
	}
	s.metrics.routesRegistered(s.app)
	s.handler = s.app.Handler()
	if cfg.Replay && cfg.RawIO {
		s.replay = replay.New(replay.Config{Proxies: proxies, Draining: &s.draining,
			Seq: func() uint64 { return src.State.Seq() + src.Editions.Seq() }})
		s.metrics.reg.MustRegister(s.replay.Collectors()...)
		// Every request from a connection goes through the recorder;
		// the tool server's internal reads (s.handler) do not.
		s.app.Server().Handler = s.replay.Wrap(s.handler)
	}
	return s, nil
}

// MissGate returns the gate of the uncached answers to queries (for
// tests: holding its turns makes every such miss wait).
func (s *Server) MissGate() *missgate.Gate { return s.misses }

// App returns the fiber app, for tests.
func (s *Server) App() *fiber.App { return s.app }

// DropAnswers empties the answer cache (see answer.Cache.Drop): a full
// reload calls it before it builds the new figures, where its memory
// peaks.
func (s *Server) DropAnswers() { s.answers.Drop() }

// WaitAnswers waits until every answer cached so far is kept or refused
// (the cache keeps answers asynchronously); for tests.
func (s *Server) WaitAnswers() { s.answers.Wait() }

// KeysVersion names the key list the edge holds (keys.Registry.Version):
// a fleet's leader serves it to the others (package relay).
func (s *Server) KeysVersion() string { return s.keys.Version() }

// ClaimsHandler decides the account attempts the fleet's other edges
// claim from this edge while it leads (package claims), with this edge's
// own windows.
func (s *Server) ClaimsHandler() http.Handler { return s.accounts.ClaimsHandler() }

// Serve answers on ln until ctx is done, then stops gracefully: it stops
// accepting, answers each open connection's next request with
// Connection: close for up to DrainTimeout, lets requests in flight
// finish (up to ShutdownTimeout) and returns.
//
// Before it answers, it loads the keys, the fleet's usage of the day and
// the fleet's attempts at the account routes of their limits' windows
// (waiting at most a few seconds: while ClickHouse is out of reach, v1
// calls and sign-ups answer 503 until a later sync succeeds), and keeps
// them in sync while it runs. Its last act is to flush the calls it counted.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	first, cancelFirst := context.WithTimeout(ctx, 5*time.Second)
	if err := s.keys.Load(first); err != nil {
		s.log.Warn("sync failing; will retry", "what", "keys", "err", err)
	}
	if err := s.limits.Usage.Sync(first); err != nil {
		s.log.Warn("sync failing; will retry", "what", "usage", "err", err)
	}
	if err := s.accounts.StartAttempts(first); err != nil {
		s.log.Warn("sync failing; will retry", "what", "attempts", "err", err)
	}
	cancelFirst()
	syncCtx, stopSync := context.WithCancel(context.Background())
	var synced sync.WaitGroup
	keysTick := s.cfg.KeysEvery
	if s.keysTick > 0 {
		keysTick = min(keysTick, s.keysTick)
	}
	synced.Go(func() { s.keys.Run(syncCtx, keysTick, s.cfg.ReadBudget+5*time.Second, s.log) })
	synced.Go(func() { s.limits.Usage.Run(syncCtx, s.cfg.UsageEvery, max(s.cfg.UsageEvery, 2*time.Second), s.log) })
	synced.Go(func() { s.accounts.RunAttempts(syncCtx, s.cfg.UsageEvery, max(s.cfg.UsageEvery, 2*time.Second)) })
	if !s.cfg.NoPrecompress {
		synced.Go(func() { s.precompress(syncCtx) })
	}
	// The miss gate takes the CPU to be contended only while answers that
	// need no computing are served: the cache's hits and the replays.
	cached := []prometheus.Counter{s.answers.HitCounter()}
	if s.replay != nil {
		cached = append(cached, s.replay.ReplayCounter())
	}
	s.misses.SetCached(func() uint64 {
		var n uint64
		for _, c := range cached {
			var m dto.Metric
			if c.Write(&m) == nil && m.Counter != nil {
				n += uint64(m.Counter.GetValue())
			}
		}
		return n
	})
	synced.Go(func() { s.misses.Watch(syncCtx) })
	// The event streams: broadcast each state's events; ended when the
	// server stops, before its drain (they never end by themselves).
	streamsDone := make(chan struct{})
	stopStreams := sync.OnceFunc(func() { close(streamsDone) })
	var streams sync.WaitGroup
	streams.Go(func() { s.stream.Run(streamsDone) })
	defer func() { stopStreams(); streams.Wait() }()
	if s.deliverer != nil {
		dctx, stopDeliveries := context.WithCancel(context.Background())
		var delivering sync.WaitGroup
		delivering.Go(func() { s.deliverer.Run(dctx) })
		defer func() { stopDeliveries(); delivering.Wait() }()
	}
	defer func() {
		stopSync()
		synced.Wait()
		// Its last act: write the calls counted since the last sync.
		fctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.limits.Usage.Flush(fctx); err != nil {
			s.log.Error("calls counted since the last sync are lost", "err", err)
		}
	}()
	errc := make(chan error, 1)
	opts := transport.Options{Raw: s.cfg.RawIO, ReadTimeout: s.cfg.ReadTimeout, IdleTimeout: s.cfg.IdleTimeout, WriteTimeout: s.cfg.WriteTimeout}
	if s.replay != nil {
		opts.Replay = s.replay
	}
	tl := transport.Listen(ln, opts)
	go func() { errc <- s.app.Listener(tl) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	// Stop accepting (a process that took over the listener accepts from
	// now on), answer each open connection's next request with
	// Connection: close, and wait for them to go, up to DrainTimeout: a
	// client of a keep-alive connection sees it closed after an answer,
	// never under a request it is sending.
	s.draining.Store(true)
	stopStreams()
	ln.Close()
	// The accept loop ends at once. fasthttp counts it as an open
	// connection while it runs and takes one off the count it reports
	// for it (GetOpenConnectionsCount): once the loop has ended, the
	// count it reports is one short until Shutdown begins.
	lerr := <-errc
	for deadline := time.Now().Add(s.cfg.DrainTimeout); s.app.Server().GetOpenConnectionsCount()+1 > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	// The connections still open wait for a request, or serve one. Those
	// waiting on the replay path end now, as fasthttp's Shutdown ends
	// the waiting ones it sees (it does not see these).
	transport.Drain(tl)
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.app.ShutdownWithContext(sctx)
	if errors.Is(err, net.ErrClosed) {
		err = nil // the listener closed above
	}
	if err == nil && lerr != nil && !errors.Is(lerr, net.ErrClosed) {
		err = lerr
	}
	return err
}
