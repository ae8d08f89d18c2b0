package edge

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/usagelog"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/account"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/apidocs"
	"github.com/edge-stats/edge/edge/apikey"
	"github.com/edge-stats/edge/edge/attempts"
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
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/edge/webhooks"
	"github.com/edge-stats/edge/mcp"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/served"
)

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
	cfg, src = cfg.withDefaults(), src.withDefaults()
	forwarded, err := clientip.ParseHeader(cfg.ClientHeader)
	if err != nil {
		return nil, fmt.Errorf("client header: %w", err)
	}
	if cfg.IPv6Prefix < 0 || cfg.IPv6Prefix > 128 {
		return nil, fmt.Errorf("IPv6 prefix /%d: use 32 to 128 (a caller is its /64 by default)", cfg.IPv6Prefix)
	}
	answers, misses, err := newAnswers(cfg, src)
	if err != nil {
		return nil, err
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
		Gate: s.gate, Log: log, Exports: src.Exports, Stream: s.stream, Ranking: jobRunning(src.Jobs, "ranks")})
	if err != nil {
		return nil, err
	}
	s.metrics = newMetrics(s)
	if err := s.metrics.reg.Register(collectorsOf(src.Collectors)); err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	s.app = s.newApp()
	if err := s.routes(src, proxies); err != nil {
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

// withDefaults returns cfg with the defaults of the settings it leaves
// unset.
func (cfg Config) withDefaults() Config {
	d := DefaultConfig()
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	if cfg.KeysEvery <= 0 {
		cfg.KeysEvery = d.KeysEvery
	}
	if cfg.UsageEvery <= 0 {
		cfg.UsageEvery = d.UsageEvery
	}
	if cfg.MaxURIBytes <= 0 || cfg.MaxHeaderBytes <= 0 || cfg.MaxBodyBytes <= 0 {
		cfg.MaxURIBytes, cfg.MaxHeaderBytes, cfg.MaxBodyBytes = cmp.Or(max(cfg.MaxURIBytes, 0), d.MaxURIBytes),
			cmp.Or(max(cfg.MaxHeaderBytes, 0), d.MaxHeaderBytes), cmp.Or(max(cfg.MaxBodyBytes, 0), d.MaxBodyBytes)
	}
	return cfg
}

// jobRunning returns whether the job named name is running on this edge,
// by jobs' status.
func jobRunning(jobs func() []cron.Status, name string) func() bool {
	return func() bool {
		for _, st := range jobs() {
			if st.Name == name {
				return st.Running
			}
		}
		return false
	}
}

// withDefaults returns src with what an edge alone uses in place of what
// it leaves unset: no editions yet, no jobs, the default ClickHouse, the
// usage and the account attempts in it.
func (src Sources) withDefaults() Sources {
	if src.Editions == nil {
		src.Editions = &views.Published[editions.Set]{}
	}
	if src.Jobs == nil {
		src.Jobs = func() []cron.Status { return nil }
	}
	if src.DB == nil {
		src.DB = analytics.NewLazy(analytics.DefaultConfig())
	}
	if src.SyncDB == nil {
		src.SyncDB = src.DB
	}
	if src.Usage == nil {
		src.Usage = usagelog.ClickHouse(src.SyncDB)
	}
	if src.Attempts == nil {
		src.Attempts = attempts.ClickHouse(src.SyncDB)
	}
	return src
}

// newAnswers returns the answer cache and the miss gate its queries'
// misses pass.
func newAnswers(cfg Config, src Sources) (*answer.Cache, *missgate.Gate, error) {
	answers, err := answer.NewCache(int64(cfg.CacheMB) << 20)
	if err != nil {
		return nil, nil, err
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
	return answers, misses, nil
}

// newApp returns the fiber app with the middleware every request passes:
// its metrics, the recovery from a panic, the check of its URI.
func (s *Server) newApp() *fiber.App {
	app := fiber.New(fiber.Config{
		AppName:               "edge",
		ErrorHandler:          s.requestBoundsProblem(guard.Pages(s.log, problem.Handler(s.log))),
		ReadBufferSize:        s.cfg.MaxHeaderBytes,
		BodyLimit:             s.cfg.MaxBodyBytes,
		DisableStartupMessage: true,
		ReadTimeout:           s.cfg.ReadTimeout,
		WriteTimeout:          s.cfg.WriteTimeout,
		IdleTimeout:           s.cfg.IdleTimeout,
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
	app.Server().HeaderReceived = func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
		if bytes.HasPrefix(h.RequestURI(), streamPath) {
			return streamConfig
		}
		return fasthttp.RequestConfig{}
	}
	app.Use(s.metrics.observe)
	app.Use(recover.New(recover.Config{EnableStackTrace: true, StackTraceHandler: func(c *fiber.Ctx, e any) {
		s.log.Error("panic in handler", "method", c.Method(), "path", apikey.Redact(c.Path()), "panic", e)
	}}))
	app.Use(s.checkURI)
	return app
}

// routes adds every route to the app: health, readiness and metrics, both
// APIs, the pages, the accounts and their webhooks, the API's reference
// and the tool server.
func (s *Server) routes(src Sources, proxies clientip.Proxies) error {
	cfg, log := s.cfg, s.log
	s.app.Get("/healthz", s.healthz)
	s.app.Get("/readyz", s.readyz)
	s.app.Get("/metrics", s.metrics.handler())
	var limit fiber.Handler
	if !cfg.NoLimits {
		limit = s.gate.Limit
	}
	s.app.Use("/api", apiCORS) // both APIs, before their keys and limits
	s.app.Use(s.checkOnce)
	respond := s.responder()
	s.v1.Routes(s.app.Group("/api/v1"), limit, respond)
	pg, err := pages.New(pages.Config{PublicURL: cfg.PublicURL},
		pages.Sources{API: s.v1, State: src.State, Editions: src.Editions, Answers: s.answers, Log: log})
	if err != nil {
		return err
	}
	for _, c := range pg.Collectors() {
		if err := s.metrics.reg.Register(c); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	pg.Routes(s.app, guard.New(guard.Config{Rate: cfg.PageRate, Burst: cfg.PageBurst, Exempt: cfg.FairUseExempt, Proxies: proxies}), respond)
	legacy.New(legacy.Config{PublicURL: cfg.PublicURL, PublicMaxAge: cfg.PublicMaxAge, FairUseRate: cfg.FairUseRate,
		FairUseBurst: cfg.FairUseBurst, FairUseExempt: cfg.FairUseExempt, Proxies: proxies, TextBudget: cfg.TextBudget},
		legacy.Sources{State: src.State, Answers: s.answers, Search: s.gate.SearchSlot, Caller: s.gate.MissCaller, Log: log, Env: s.v1.Env()}).Routes(s.app, respond)
	if err := s.accountRoutes(src, proxies); err != nil {
		return err
	}
	apidocs.Routes(s.app, respond)
	return s.mountTools(v1.Version)
}

// accountRoutes adds /account (sign-up, sign-in, keys) and its webhooks,
// and the webhooks' deliverer where this edge delivers.
func (s *Server) accountRoutes(src Sources, proxies clientip.Proxies) error {
	cfg := s.cfg
	accounts := keys.NewAccounts(src.DB, runtime.GOMAXPROCS(0), nil)
	accounts.Wait = cfg.HashWait
	acc := account.New(account.Config{SignInFailures: cfg.SignInFailures, SignInEmailFailures: cfg.SignInEmailFailures, SignInWindow: cfg.SignInWindow,
		SignUps: cfg.SignUps, DefaultDailyLimit: cfg.Limits.Keyed.PerDay, Proxies: proxies, ReloadBudget: cfg.ReadBudget + 5*time.Second,
		MaxAddresses: cfg.Limits.MaxAddresses, Shared: src.Attempts, Fleet: src.Claims, PublicURL: cfg.PublicURL,
		CountWait: cfg.CountWait},
		accounts, s.keys, s.log)
	acc.Routes(s.app)
	s.accounts = acc
	for _, c := range acc.Collectors() {
		if err := s.metrics.reg.Register(c); err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
	}
	hooks, err := webhooks.NewAPI(cfg.Webhooks, acc.SignIn, src.DB, src.State, s.log)
	if err != nil {
		return err
	}
	hooks.Routes(s.app)
	if cfg.Webhooks.Key != "" && cfg.Webhooks.Deliver && src.DB != nil {
		if s.deliverer, err = webhooks.NewDeliverer(cfg.Webhooks, src.DB, src.State, webhooks.Lead{Leading: src.Leading, Epoch: src.Epoch}, s.log); err != nil {
			return err
		}
	}
	return nil
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
