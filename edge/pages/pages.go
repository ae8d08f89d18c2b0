// Package pages answers the edge's pages for people and their Atom feeds,
// one file per page type: the home page, a store's, a chart's, the
// categories and topics, the listings' browser, a listing's page (what a
// person opens from the url of a legacy CSV row or a shared link), a
// comparison, the change events, the weekly editions, the figures'
// definitions and /robots.txt. A page is a codec of a read declared in
// package v1 (package read: one query, one preamble, one cache key
// discipline), served on the one path the API's answers take; it reads
// no database; package render holds the templates (files parsed once
// at start) and the formatting every page shares, and package guard puts
// every page behind the bounds and headers that fit people in browsers.
// Pages are answers like any other: cached per view generation, with weak
// ETags and 304s, sent by the same responder.
package pages

import (
	"log/slog"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/guard"
	"github.com/edge-stats/edge/edge/pages/render"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
	"github.com/edge-stats/edge/views/served"
)

// Config holds the pages' budgets and address.
type Config struct {
	PublicURL string // the service's public address, for the feeds' absolute links
}

// Sources are what the pages are made from: the API's queries, whose
// typed results the pages write as HTML, and the published state.
type Sources struct {
	API      *v1.API
	State    *views.Published[served.State]
	Editions *views.Published[editions.Set]
	Answers  *answer.Cache
	Log      *slog.Logger
}

// Pages answers the pages for people and their feeds.
type Pages struct {
	cfg      Config
	api      *v1.API
	state    *views.Published[served.State]
	editions *views.Published[editions.Set]
	answers  *answer.Cache
	log      *slog.Logger
	// definitions is the page of the figures' definitions, and robots
	// the site's /robots.txt, both made once.
	definitions, robots *answer.Answer
	// suggest makes the suggestions of fruitless searches, and counts them.
	suggest suggester
}

// New returns the pages made from src.
func New(cfg Config, src Sources) (*Pages, error) {
	defs := make([]render.Definition, len(v1.Definitions))
	for i, d := range v1.Definitions {
		defs[i] = render.Definition{Name: d.Name, Measures: d.Measures, Window: d.Window, Cadence: d.Cadence, Null: d.Null}
	}
	body, err := render.RenderDefinitions(defs, "/api/v1/definitions")
	if err != nil {
		return nil, err
	}
	definitions := answer.New(body, htmlType)
	definitions.SetModified(time.Now())
	definitions.Tag("edge", "edge-page", "page-definitions")
	robots := answer.New([]byte(render.Robots), fiber.MIMETextPlainCharsetUTF8).Tag("edge", "edge-page", "page-robots")
	return &Pages{cfg: cfg, api: src.API, state: src.State, editions: src.Editions, answers: src.Answers, log: src.Log,
		definitions: definitions, robots: robots, suggest: newSuggester()}, nil
}

// Collectors returns the pages' metrics (the searches of suggestions),
// for /metrics.
func (s *Pages) Collectors() []prometheus.Collector { return s.suggest.collectors() }

// Routes adds the pages for people to app, behind guard (the pages'
// bounds, headers and HTML errors: package guard), each answer sent by
// respond: the home page, a store's, its charts, categories and topics,
// the listings' browser, a listing's page (the url of a legacy CSV row), a
// comparison, the change events and the weekly editions with their Atom
// feeds, the figures' definitions and /robots.txt.
func (s *Pages) Routes(app *fiber.App, g *guard.Guard, respond answer.Responder) {
	guard := g.Handler
	s.api.Env().Get(app, "/badges/:store/:id/:figure", respond, s.badgeHandler(), g.Badges)
	s.api.Env().Get(app, "/embed/:store/:id/size.svg", respond, s.embedHandler(), g.Badges)
	s.api.Env().Get(app, "/listings", respond, s.browseHandler(), guard)
	s.api.Env().Get(app, "/compare", respond, s.compareHandler(), guard)
	s.api.Env().Get(app, "/listings/:store/:id", respond, s.listingHandler(), guard)
	s.api.Env().Get(app, "/charts/:store", respond, s.chartHandler(), guard)
	s.api.Env().Get(app, "/stores/:store", respond, s.storeHandler(), guard)
	s.api.Env().Get(app, "/categories/:store", respond, s.categoriesHandler(), guard)
	s.api.Env().Get(app, "/categories/:store/:category", respond, s.categoryHandler(), guard)
	s.api.Env().Get(app, "/permissions", respond, s.permissionsHandler(), guard)
	s.api.Env().Get(app, "/reviews/search", respond, s.reviewSearchHandler(), guard)
	s.api.Env().Get(app, "/tags", respond, s.tagsHandler(), guard)
	s.api.Env().Get(app, "/developers/:store/:developer", respond, s.developerHandler(), guard)
	s.api.Env().Get(app, "/tags/:slug/:store", respond, s.tagHandler(), guard)
	s.api.Env().Get(app, "/events", respond, s.eventsHandler(), guard)
	s.api.Env().Get(app, "/weeks", respond, s.weeksHandler(), guard)
	s.api.Env().Get(app, "/weeks.atom", respond, s.weeksFeedHandler(), guard)
	s.api.Env().Get(app, "/week", respond, s.weekHandler(), guard)
	s.api.Env().Get(app, "/week/:id", respond, s.weekHandler(), guard)
	s.api.Env().Get(app, "/events.atom", respond, s.eventsFeedHandler(), guard)
	s.api.Env().Get(app, "/listings/:store/:id/changes.atom", respond, s.listingFeedHandler(), guard)
	s.api.Env().Get(app, "/listings/:store/:id/changes", respond, s.listingChangesHandler(), guard)
	s.api.Env().Get(app, "/listings/:store/:id/reviews.atom", respond, s.reviewsFeedHandler(), guard)
	s.api.Env().Get(app, "/listings/:store/:id/reviews", respond, s.reviewsHandler(), guard)
	s.api.Env().Get(app, "/", respond, s.homeHandler(), guard)
	app.Get("/robots.txt", guard, respond.Handle(func(*fiber.Ctx) (answer.Reply, error) {
		return answer.Reply{Answer: s.robots, CacheControl: pageCacheControl}, nil
	}))
	app.Get("/definitions", guard, respond.Handle(func(*fiber.Ctx) (answer.Reply, error) {
		return answer.Reply{Answer: s.definitions, CacheControl: pageCacheControl}, nil
	}))
}

// The content types of the pages and of the feeds.
const (
	htmlType = fiber.MIMETextHTMLCharsetUTF8
	atomType = "application/atom+xml; charset=utf-8"
)

// pageCacheControl is the Cache-Control of the pages and feeds: the same
// for every reader (no key, no per-caller header), so a CDN may keep them
// as it keeps the legacy API's answers (docs/pages.md, Built like every
// other answer).
var pageCacheControl = answer.Public(60 * time.Second)

// pageAnswer is a page or a feed of key's route, with its cache tags
// (docs/operations.md, Behind a CDN): "edge", "edge-page" on every page
// and feed, and the route's ("page-charts" for /charts/{store},
// "page-home" for /, "page-events-atom" for /events.atom).
func pageAnswer(key answer.Key, contentType string, body []byte) *answer.Answer {
	return answer.New(body, contentType).Tag("edge", "edge-page", pageTag(key))
}

// pageTag is the cache tag of key's route: its path's literal segments,
// joined by '-' after "page", with '.' as '-'.
func pageTag(key answer.Key) string {
	route, _, _ := strings.Cut(string(key.Text()), "@")
	var parts []string
	for _, seg := range strings.Split(route, "/") {
		if seg != "" && !strings.HasPrefix(seg, ":") {
			parts = append(parts, strings.ReplaceAll(seg, ".", "-"))
		}
	}
	if len(parts) == 0 {
		parts = []string{"home"}
	}
	return "page-" + strings.Join(parts, "-")
}
