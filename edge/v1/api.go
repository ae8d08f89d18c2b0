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
	// Ranking reports whether the ranks job runs on this edge now (nil:
	// never): what it writes (a category's weeks, the permissions'
	// counts) may then be incomplete, and answers that read it are not
	// kept.
	Ranking func() bool
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
	reads       *fileReads // the readings of export files, counted once each
	stream      *stream.Hub
	ranking     func() bool
	// permChange holds the permissions' daily counts last read (permChange).
	permChange permChangeMemo
	// env is what the reads are served from; listings the listings read.
	env      read.Env
	listings *read.Read[ListingsParams, document.ListingPage]
	listing  *read.Read[ListingParams, document.Listing]
	history  *read.Read[HistoryParams, History]
	reviews  *read.Read[ReviewsParams, ReviewPage]
	compare  *read.Read[CompareParams, Compared]
	growth   *read.Read[GrowthParams, Growth]
	// reviewSearch is the review search read.
	reviewSearch *read.Read[ReviewSearchParams, ReviewSearch]
	// category is the read of one category of a store.
	category *read.Read[CategoryParams, Category]
	// permissions is the read of the permissions' counts.
	permissions *read.Read[NoParams, Permissions]
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
		gate: src.Gate, log: src.Log, openapi: openapi, definitions: defs, exports: src.Exports, reads: newFileReads(), stream: src.Stream, ranking: src.Ranking}
	if s.ranking == nil {
		s.ranking = func() bool { return false }
	}
	s.env = read.Env{State: src.State, Answers: src.Answers, MissCaller: src.Gate.MissCaller, Paths: read.NewPaths()}
	s.listings, s.listing, s.history = s.newListingsRead(), newListingRead(), s.newHistoryRead()
	s.reviews, s.compare, s.growth = s.newReviewsRead(), s.newCompareRead(), s.newGrowthRead()
	s.reviewSearch, s.category, s.permissions = s.newReviewSearchRead(), s.newCategoryRead(), s.newPermissionsRead()
	return s, nil
}

// Env returns what the API's reads are served from, for the pages that
// serve them too.
func (s *API) Env() read.Env { return s.env }

// OpenAPIAnswer returns the served OpenAPI description.
func (s *API) OpenAPIAnswer() *answer.Answer { return s.openapi }

// Routes adds the API's routes to r (the /api/v1 group), each answer
// sent by respond, each read through the one serve path (read.Serve,
// routed with read.Env.Get); the answers of a route with a page for
// people name it in their Link header (read.Read.Page). The description and the figures' definitions need no
// key and count against no limit: they are routed before limit, the
// middleware that checks keys and limits (nil: none).
func (s *API) Routes(r fiber.Router, limit fiber.Handler, respond answer.Responder) {
	r.Get("/openapi.json", respond.Handle(s.getOpenAPI))
	r.Get("/definitions", respond.Handle(withPage(answer.SamePage, s.getDefinitions)))
	// An export file checks keys and counts itself: a reading of a file
	// is one call however many range requests it takes (fileReads).
	r.Get("/exports/:day/*", s.getExportFile)
	if limit != nil {
		r.Use(limit)
	}
	s.env.Get(r, "/listings", respond, read.Serve(s.env, s.listings, append([]read.Codec[document.ListingPage]{listingsJSON}, ListingFiles("/api/v1/listings")...)...))
	s.env.Get(r, "/listings/:store/:id", respond, read.Serve(s.env, s.listing, listingJSON))
	s.env.Get(r, "/listings/:store/:id/reviews", respond, read.Serve(s.env, s.reviews, reviewsJSON, reviewsCSV, reviewsNDJSON))
	s.env.Get(r, "/listings/:store/:id/history", respond, read.Serve(s.env, s.history, historyJSON, historyCSVCodec, historyNDJSON))
	s.env.Get(r, "/listings/:store/:id/history.csv", respond, read.Serve(s.env, s.history, historyCSVCodec))
	s.env.Get(r, "/listings/:store/:id/growth", respond, read.Serve(s.env, s.growth, growthJSON))
	s.env.Get(r, "/listings/:store/:id/changes", respond, read.Serve(s.env, s.ListingChangesRead(),
		append([]read.Codec[ListingChanges]{listingChangesJSON}, ListingChangesFiles()...)...))
	s.env.Get(r, "/listings/:store/:id/changes.csv", respond, read.Serve(s.env, s.ListingChangesRead(), listingChangesCSV))
	s.env.Get(r, "/events", respond, read.Serve(s.env, s.EventsRead(), append([]read.Codec[Events]{eventsJSON}, EventsFiles()...)...))
	r.Get("/events/stream", s.getEventStream)
	s.env.Get(r, "/events.csv", respond, read.Serve(s.env, s.EventsRead(), eventsCSVCodec))
	s.env.Get(r, "/compare", respond, read.Serve(s.env, s.compare, compareJSON, compareCSVCodec, compareNDJSON))
	s.env.Get(r, "/compare.csv", respond, read.Serve(s.env, s.compare, compareCSVCodec))
	s.env.Get(r, "/changes", respond, read.Serve(s.env, s.ChangesRead(), append([]read.Codec[changesAnswer]{changesJSON}, changesFiles...)...))
	r.Get("/exports", respond.Handle(s.getExports))
	s.env.Get(r, "/reviews/search", respond, read.Serve(s.env, s.reviewSearch, reviewSearchJSON, reviewSearchCSV, reviewSearchNDJSON))
	s.env.Get(r, "/permissions", respond, read.Serve(s.env, s.permissions, append([]read.Codec[Permissions]{permissionsJSON}, PermissionsFiles()...)...))
	s.env.Get(r, "/categories/:store", respond, read.Serve(s.env, categoriesRead, append([]read.Codec[Categories]{categoriesJSON}, CategoriesFiles()...)...))
	s.env.Get(r, "/categories/:store/:category", respond, read.Serve(s.env, s.category, append([]read.Codec[Category]{categoryJSON}, CategoryFiles()...)...))
	s.env.Get(r, "/charts/:store", respond, read.Serve(s.env, chartRead, append([]read.Codec[Chart]{chartJSON}, ChartFiles()...)...))
	s.env.Get(r, "/tags", respond, read.Serve(s.env, tagsRead, append([]read.Codec[Tags]{tagsJSON}, TagsFiles()...)...))
	s.env.Get(r, "/developers/:store/:developer", respond, read.Serve(s.env, developerRead, append([]read.Codec[Developer]{developerJSON}, DeveloperFiles()...)...))
	s.env.Get(r, "/tags/:slug/:store", respond, read.Serve(s.env, tagRead, append([]read.Codec[TagListings]{tagJSON}, TagFiles()...)...))
	s.env.Get(r, "/stores/:store/stats", respond, read.Serve(s.env, statsRead, statsJSON))
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
