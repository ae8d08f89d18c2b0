// Package v1 is the versioned API under /api/v1: listings and their
// documents, history and reviews, review search, categories, charts,
// tags, store statistics, weekly editions, and the OpenAPI description of
// it all. Every figure comes from the published views; history and
// reviews are read from ClickHouse under a time budget. Answers are
// cached per view generation (package answer).
package v1

import (
	"log/slog"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/edge/stream"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/served"
)

// Version is the API's version, as the OpenAPI description and the tool
// server give it.
const Version = "1.0.0"

// Config holds the v1 API's budgets.
type Config struct {
	ReadBudget    time.Duration // longest a per-request ClickHouse read may take
	TextBudget    time.Duration // time budget of q on /api/v1/listings, searched in memory
	SearchBudget  time.Duration // time budget of review searches in ClickHouse (whole seconds on 18.16)
	SearchMaxRows uint64        // rows a review search may read in ClickHouse (0: no bound)
	PublicURL     string        // the service's public address, for the feeds' absolute links
}

// Sources are what the API answers from.
type Sources struct {
	State    *views.Published[served.State]
	Editions *views.Published[editions.Set]
	DB       *analytics.Lazy // for history, reviews and review search
	Answers  *answer.Cache
	Gate     *access.Gate // limits (nil: none) and the search pool
	Log      *slog.Logger
	Exports  Exports     // the daily bulk exports (nil: none on this edge)
	Stream   *stream.Hub // the event streams (nil: none on this edge)
}

// API answers /api/v1.
type API struct {
	cfg      Config
	state    *views.Published[served.State]
	editions *views.Published[editions.Set]
	db       *analytics.Lazy
	answers  *answer.Cache
	gate     *access.Gate
	log      *slog.Logger
	openapi  *answer.Answer
	// definitions is the answer of /definitions, made once.
	definitions *answer.Answer
	exports     Exports
	stream      *stream.Hub
	// env is what the reads are served from; listings the listings read.
	env      read.Env
	listings *read.Read[ListingsParams, document.ListingPage]
}

// New returns the API answering from src.
func New(cfg Config, src Sources) (*API, error) {
	spec, err := OpenAPI()
	if err != nil {
		return nil, err
	}
	openapi := answer.New(spec, fiber.MIMEApplicationJSON)
	// The description changes only with the binary: its Last-Modified is
	// when this process started (an edge started later gives a later date,
	// which costs a client at most one full answer).
	openapi.SetModified(time.Now())
	openapi.Tag("edge", "api-v1-openapi")
	defs, err := definitionsAnswer()
	if err != nil {
		return nil, err
	}
	defs.SetModified(time.Now())
	defs.Tag("edge", "api-v1-definitions")
	s := &API{cfg: cfg, state: src.State, editions: src.Editions, db: src.DB, answers: src.Answers,
		gate: src.Gate, log: src.Log, openapi: openapi, definitions: defs, exports: src.Exports, stream: src.Stream}
	s.env = read.Env{State: src.State, Answers: src.Answers, MissCaller: src.Gate.MissCaller, Paths: read.NewPaths()}
	s.listings = s.newListingsRead()
	return s, nil
}

// Env returns what the API's reads are served from, for the pages that
// serve them too.
func (s *API) Env() read.Env { return s.env }

// OpenAPIAnswer returns the served OpenAPI description.
func (s *API) OpenAPIAnswer() *answer.Answer { return s.openapi }

// Routes adds the API's routes to r (the /api/v1 group), each answer
// sent by respond; the answers of a route with a page for people name it
// in their Link header (withPage). The description and the figures' definitions need no
// key and count against no limit: they are routed before limit, the
// middleware that checks keys and limits (nil: none).
func (s *API) Routes(r fiber.Router, limit fiber.Handler, respond answer.Responder) {
	// same and parent are the routes whose page is at their own path
	// (answer.SamePage) or their parent's (answer.ParentPage).
	same := func(h answer.Handler) fiber.Handler { return respond.Handle(withPage(answer.SamePage, h)) }
	parent := func(h answer.Handler) fiber.Handler { return respond.Handle(withPage(answer.ParentPage, h)) }
	r.Get("/openapi.json", respond.Handle(s.getOpenAPI))
	r.Get("/definitions", same(s.getDefinitions))
	if limit != nil {
		r.Use(limit)
	}
	s.env.Get(r, "/listings", respond, read.Serve(s.env, s.listings, append([]read.Codec[document.ListingPage]{listingsJSON}, ListingFiles("/api/v1/listings")...)...))
	r.Get("/listings/:store/:id", same(s.getListing))
	r.Get("/listings/:store/:id/reviews", parent(s.getReviews))
	r.Get("/listings/:store/:id/history", parent(s.getHistory))
	r.Get("/listings/:store/:id/history.csv", parent(s.getHistory))
	r.Get("/listings/:store/:id/growth", parent(s.getGrowth))
	s.env.Get(r, "/listings/:store/:id/changes", respond, read.Serve(s.env, s.ListingChangesRead(),
		append([]read.Codec[ListingChanges]{listingChangesJSON}, ListingChangesFiles()...)...))
	s.env.Get(r, "/listings/:store/:id/changes.csv", respond, read.Serve(s.env, s.ListingChangesRead(), listingChangesCSV))
	s.env.Get(r, "/events", respond, read.Serve(s.env, s.EventsRead(), append([]read.Codec[Events]{eventsJSON}, EventsFiles()...)...))
	r.Get("/events/stream", s.getEventStream)
	s.env.Get(r, "/events.csv", respond, read.Serve(s.env, s.EventsRead(), eventsCSVCodec))
	r.Get("/compare", same(s.getCompare))
	r.Get("/compare.csv", same(s.getCompare))
	s.env.Get(r, "/changes", respond, read.Serve(s.env, s.ChangesRead(), append([]read.Codec[changesAnswer]{changesJSON}, changesFiles...)...))
	r.Get("/exports", respond.Handle(s.getExports))
	r.Get("/exports/:day/:file", s.getExportFile)
	r.Get("/reviews/search", respond.Handle(s.getReviewSearch))
	r.Get("/categories/:store", same(s.getCategories))
	r.Get("/charts/:store", same(s.getChart))
	r.Get("/tags", same(s.getTags))
	r.Get("/tags/:slug/:store", same(s.getTag))
	r.Get("/stores/:store/stats", parent(s.getStats))
	s.env.Get(r, "/week", respond, read.Serve(s.env, s.WeekRead(), weekJSON))
	s.env.Get(r, "/weeks", respond, read.Serve(s.env, s.WeeksRead(), append([]read.Codec[Weeks]{weeksJSON}, WeeksFiles()...)...))
	s.env.Get(r, "/week/:id", respond, read.Serve(s.env, s.WeekRead(), weekJSON))
}

// withPage is route h, whose answers name their page for people in
// their Link header, where p says (docs/pages.md, Where a page lives).
func withPage(p answer.Page, h answer.Handler) answer.Handler {
	return func(c *fiber.Ctx) (answer.Reply, error) {
		r, err := h(c)
		r.Page = p
		return r, err
	}
}

// readProblem logs a failed read from ClickHouse and returns its answer.
func (s *API) readProblem(what string, err error) *problem.Problem {
	s.log.Warn("read-through failed", "what", what, "err", err)
	return problem.ReadFailed(what, err)
}
