package edge

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge/keys"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/mcp"
	"github.com/edge-stats/edge/views"
)

// Config holds the server's settings.
type Config struct {
	Listen          string        // address to listen on
	ReadTimeout     time.Duration // whole request, headers and body
	WriteTimeout    time.Duration // whole response
	IdleTimeout     time.Duration // keep-alive connections
	ShutdownTimeout time.Duration // how long a graceful stop may wait for requests in flight
	CacheMB         int           // answer cache size in MiB
	PublicURL       string        // the service's public address, for links such as the CSV's url column
	TrustedProxies  Prefixes      // connections from these may name the client in X-Forwarded-For
	FairUseRate     float64       // legacy API: requests a second per address (0 turns it off)
	FairUseBurst    int           // legacy API: requests an address may make at once
	FairUseExempt   Prefixes      // legacy API: addresses without fair use, such as a CDN's
	PublicMaxAge    time.Duration // legacy API: max-age of its public Cache-Control
	ReadBudget      time.Duration // longest a per-request ClickHouse read may take
	TextBudget      time.Duration // time budget of q on /api/v1/listings, searched in memory
	SearchBudget    time.Duration // time budget of review searches in ClickHouse (whole seconds on 18.16)
	SearchMaxRows   uint64        // rows a review search may read in ClickHouse (0: no bound)
	Limits          limits.Config // the v1 API's limits and search pool
	NoLimits        bool          // serve v1 without keys and limits (an internal edge behind a gateway that applies them; benchmarks)
	SDKOnlyTools    bool          // answer every /mcp request through the MCP SDK, without the fast tools/call path (for comparison)
	KeysEvery       time.Duration // how often the key list is reloaded from ClickHouse
	UsageEvery      time.Duration // how often the day's usage is flushed to ClickHouse and the fleet's totals read back
	SignInFailures  int           // failed sign-ins an e-mail address or client address may make in SignInWindow
	SignInWindow    time.Duration // the window of SignInFailures
	SignUps         int           // accounts one client address may make an hour
}

// DefaultConfig returns the settings used when none are given.
func DefaultConfig() Config {
	return Config{
		Listen:          "127.0.0.1:8080",
		ReadTimeout:     10 * time.Second,
		WriteTimeout:    30 * time.Second,
		IdleTimeout:     2 * time.Minute,
		ShutdownTimeout: 15 * time.Second,
		CacheMB:         256,
		PublicURL:       "http://127.0.0.1:8080",
		FairUseRate:     1,
		FairUseBurst:    20,
		PublicMaxAge:    time.Minute,
		ReadBudget:      2 * time.Second,
		TextBudget:      100 * time.Millisecond,
		SearchBudget:    time.Second,
		SearchMaxRows:   200_000_000,
		Limits:          limits.DefaultConfig(),
		KeysEvery:       10 * time.Second,
		UsageEvery:      2 * time.Second,
		SignInFailures:  10,
		SignInWindow:    15 * time.Minute,
		SignUps:         5,
	}
}

// Sources are what the server answers from: the published states, and the
// background jobs' status for /readyz and /metrics.
type Sources struct {
	State    *views.Published[views.State]
	Editions *views.Published[views.Editions]
	Jobs     func() []cron.Status // may be nil
	DB       *analytics.Lazy      // for reads that go to ClickHouse per request (reviews); may be nil
}

// Server is the edge's HTTP server.
type Server struct {
	cfg         Config
	log         *slog.Logger
	state       *views.Published[views.State]
	editions    *views.Published[views.Editions]
	jobs        func() []cron.Status
	db          *analytics.Lazy
	app         *fiber.App
	metrics     *metrics
	answers     *answerCache
	fairuse     *FairUse
	publicCache string                  // Cache-Control of the legacy API
	openapi     *Answer                 // the API's OpenAPI description
	handler     fasthttp.RequestHandler // the app's, for the tool server's internal reads
	keys        *keys.Registry
	tools       *mcp.Server
	// internalCtxs are request contexts for the tool server's reads.
	internalCtxs sync.Pool
	accounts     *keys.Accounts
	limits       *limits.Limiter
	signIns      *signInGuard
}

// New returns a server answering from src.
func New(cfg Config, src Sources, log *slog.Logger) (*Server, error) {
	if src.Editions == nil {
		src.Editions = &views.Published[views.Editions]{}
	}
	if src.Jobs == nil {
		src.Jobs = func() []cron.Status { return nil }
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	answers, err := newAnswerCache(int64(cfg.CacheMB) << 20)
	if err != nil {
		return nil, err
	}
	if src.DB == nil {
		src.DB = analytics.NewLazy(analytics.DefaultConfig())
	}
	s := &Server{cfg: cfg, log: log, state: src.State, editions: src.Editions, jobs: src.Jobs, db: src.DB, answers: answers,
		fairuse: NewFairUse(cfg.FairUseRate, cfg.FairUseBurst), publicCache: publicCacheControl(cfg.PublicMaxAge)}
	if cfg.KeysEvery <= 0 {
		cfg.KeysEvery = DefaultConfig().KeysEvery
	}
	if cfg.UsageEvery <= 0 {
		cfg.UsageEvery = DefaultConfig().UsageEvery
	}
	s.keys = keys.NewRegistry(src.DB)
	s.accounts = keys.NewAccounts(src.DB, runtime.GOMAXPROCS(0))
	s.limits = limits.New(cfg.Limits, src.DB)
	s.signIns = newSignInGuard(cfg)
	spec, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	s.openapi = NewAnswer(spec, fiber.MIMEApplicationJSON)
	s.metrics = newMetrics(s)
	s.app = fiber.New(fiber.Config{
		AppName:               "edge",
		ErrorHandler:          errorHandler(log),
		DisableStartupMessage: true,
		ReadTimeout:           cfg.ReadTimeout,
		WriteTimeout:          cfg.WriteTimeout,
		IdleTimeout:           cfg.IdleTimeout,
		JSONEncoder:           json.Marshal,
		StrictRouting:         false,
		CaseSensitive:         true,
	})
	s.app.Use(s.metrics.observe)
	s.app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		log.Error("panic in handler", "method", c.Method(), "path", keys.Redact(c.Path()), "panic", e)
	}}))
	s.routes()
	if err := s.mountTools(Version); err != nil {
		return nil, err
	}
	s.metrics.routesRegistered(s.app)
	s.handler = s.app.Handler()
	return s, nil
}

func (s *Server) routes() {
	s.app.Get("/healthz", s.healthz)
	s.app.Get("/readyz", s.readyz)
	s.app.Get("/metrics", s.metrics.handler())
	v1 := s.app.Group("/api/v1")
	// The description needs no key and counts against no limit: it is
	// routed before the limits' middleware.
	v1.Get("/openapi.json", s.getOpenAPI)
	if !s.cfg.NoLimits {
		v1.Use(s.limit)
	}
	v1.Get("/listings", s.getListings)
	v1.Get("/listings/:store/:id", s.getListing)
	v1.Get("/listings/:store/:id/reviews", s.getReviews)
	v1.Get("/listings/:store/:id/history", s.getHistory)
	v1.Get("/reviews/search", s.getReviewSearch)
	v1.Get("/categories/:store", s.getCategories)
	v1.Get("/charts/:store", s.getChart)
	v1.Get("/tags", s.getTags)
	v1.Get("/tags/:slug/:store", s.getTag)
	v1.Get("/stores/:store/stats", s.getStats)
	v1.Get("/week", s.getLatestWeek)
	v1.Get("/week/:id", s.getWeek)
	// The legacy API, with fair use per address (not a group middleware:
	// that would also cover /api/v1).
	s.app.Get("/api/extensions", s.fairUse, s.getExtensions)
	s.app.Get("/api/extensions.csv", s.fairUse, s.getExtensionsCSV)
	s.app.Get("/api/summary", s.fairUse, s.getSummary)
	s.app.Get("/api/categories", s.fairUse, s.getLegacyCategories)
	s.app.Get("/api/permissions", s.fairUse, s.getPermissions)
	// Self-service accounts and keys.
	s.app.Post("/account", s.signUp)
	s.app.Get("/account/keys", s.listKeys)
	s.app.Post("/account/keys", s.createKey)
	s.app.Delete("/account/keys/:id", s.revokeKey)
}

// App returns the fiber app, for tests.
func (s *Server) App() *fiber.App { return s.app }

// Serve answers on ln until ctx is done, then stops gracefully: it stops
// accepting, lets requests in flight finish (up to ShutdownTimeout) and
// returns.
//
// Before it answers, it loads the keys and the fleet's usage of the day
// (waiting at most a few seconds: while ClickHouse is out of reach, v1
// calls answer 503 until a later sync succeeds), and keeps both in sync
// while it runs. Its last act is to flush the calls it counted.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	first, cancelFirst := context.WithTimeout(ctx, 5*time.Second)
	s.report(s.loadKeys(first), false, "keys")
	s.report(s.syncUsage(first), false, "usage")
	cancelFirst()
	syncCtx, stopSync := context.WithCancel(context.Background())
	synced := make(chan struct{})
	go func() { defer close(synced); s.syncAccess(syncCtx) }()
	defer func() {
		stopSync()
		<-synced
		if err := s.flushUsage(); err != nil {
			s.log.Error("calls counted since the last sync are lost", "err", err)
		}
	}()
	errc := make(chan error, 1)
	go func() { errc <- s.app.Listener(withSendfile(ln)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	if err := s.app.ShutdownWithContext(sctx); err != nil {
		return err
	}
	return <-errc
}
