package legacy

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/ratelimit"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/served"
)

// Config holds the legacy API's settings.
type Config struct {
	PublicURL     string            // the service's public address, for the CSV's url column
	PublicMaxAge  time.Duration     // max-age of its public Cache-Control
	FairUseRate   float64           // requests a second per address (0 turns it off)
	FairUseBurst  int               // requests an address may make at once
	FairUseExempt clientip.Prefixes // addresses without fair use, such as a CDN's
	Proxies       clientip.Proxies  // which connections may name the client, and in which header
	TextBudget    time.Duration     // time budget of a text search (q), searched in memory (0: none)
}

// Sources are what the API answers from.
type Sources struct {
	State   *views.Published[served.State]
	Answers *answer.Cache
	// Search takes a slot of the search pool shared with /api/v1, or
	// answers why not; call the func it returns when the search ends.
	Search func() (func(), error)
	// Caller says who a request's uncached answers are computed for, at
	// the miss gate (access.Gate.MissCaller); nil: its address alone.
	Caller func(*fiber.Ctx) missgate.Caller
	Log    *slog.Logger
	// Env is what the reads are served from (their paths recorded with
	// the API's); its MissCaller is Caller.
	Env read.Env
}

// API answers /api.
type API struct {
	cfg         Config
	state       *views.Published[served.State]
	answers     *answer.Cache
	search      func() (func(), error)
	caller      func(*fiber.Ctx) missgate.Caller
	fairuse     *limits.FairUse
	publicCache string // Cache-Control of every answer
	// replayAdmit is replayFairUse, made once (package replay keeps it).
	replayAdmit ratelimit.Admit
	env         read.Env
}

// New returns the API answering from src.
func New(cfg Config, src Sources) *API {
	if cfg.TextBudget <= 0 {
		cfg.TextBudget = time.Hour // no budget to speak of
	}
	if src.Search == nil {
		src.Search = func() (func(), error) { return func() {}, nil }
	}
	s := &API{cfg: cfg, state: src.State, answers: src.Answers, search: src.Search, caller: src.Caller,
		fairuse: limits.NewFairUse(cfg.FairUseRate, cfg.FairUseBurst), publicCache: answer.Public(cfg.PublicMaxAge)}
	s.replayAdmit = s.replayFairUse
	s.env = src.Env
	if s.env.State == nil {
		s.env.State, s.env.Answers = src.State, src.Answers
	}
	s.env.MissCaller = s.missCaller
	return s
}

// Routes adds the API's routes to app, each behind fair use (not a group
// middleware: that would also cover /api/v1), each answer sent by
// respond.
func (s *API) Routes(app *fiber.App, respond answer.Responder) {
	ext := s.extensionsRead()
	s.env.Get(app, "/api/extensions", respond, read.Serve(s.env, ext, extensionsJSON), s.fairUse)
	s.env.Get(app, "/api/extensions.csv", respond, read.Serve(s.env, ext, s.extensionsCSV()), s.fairUse)
	s.env.Get(app, "/api/summary", respond, s.figureRead("/api/summary", false, func(f *figures.Figures, _ *views.Store) any { return f.Summary() }), s.fairUse)
	s.env.Get(app, "/api/categories", respond, s.figureRead("/api/categories", true, categoryNames), s.fairUse)
	s.env.Get(app, "/api/permissions", respond, s.figureRead("/api/permissions", false, func(f *figures.Figures, _ *views.Store) any { return f.Permissions() }), s.fairUse)
}
