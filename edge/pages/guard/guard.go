// Package guard puts the edge's HTML pages (package page) behind the
// bounds and headers that fit people in browsers: a bound per client
// address generous enough for a person clicking through the site, the
// pages' security headers, and an HTML answer, never a JSON body, when a
// page is refused or fails.
package guard

import (
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/accept"
	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/edge/listargs"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/ratelimit"
)

// Config bounds the pages per client address: a person clicking
// through the site, or a few behind one address, never meets it; a
// crawler that asks for every listing does.
type Config struct {
	Rate    float64           // pages a second per address (0: no bound)
	Burst   int               // pages an address may ask for at once
	Exempt  clientip.Prefixes // addresses without a bound (a CDN's, which caches pages)
	Proxies clientip.Proxies  // which connections may name the client
}

// Default returns the pages' default bounds: 2 pages a second per
// address, 60 at once.
func Default() Config { return Config{Rate: 2, Burst: 60} }

// Guard puts pages behind their bounds and gives them the headers and
// error answers of pages: a refused or failed page is an HTML page that
// says what happened and when to come back, never a JSON body.
type Guard struct {
	cfg   Config
	fair  *limits.FairUse
	admit ratelimit.Admit
}

// New returns the guard of the pages.
func New(cfg Config) *Guard {
	g := &Guard{cfg: cfg, fair: limits.NewFairUse(cfg.Rate, cfg.Burst)}
	g.admit = g.replayAdmit
	return g
}

// Headers sets a page's security headers: its Content-Security-Policy
// (its own style, never framed), no sniffing of its type, and a referrer
// that names only this site to others.
func Headers(c *fiber.Ctx) {
	c.Set(fiber.HeaderContentSecurityPolicy, render.CSP)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderReferrerPolicy, "strict-origin-when-cross-origin")
}

// Handler is the middleware of every page route.
func (g *Guard) Handler(c *fiber.Ctx) error {
	Headers(c)
	if err := g.limit(c); err != nil {
		return Error(c, err)
	}
	if err := c.Next(); err != nil {
		return Error(c, err)
	}
	return nil
}

// Badges is the middleware of the badge routes: the pages' bound, a
// badge's own headers (an image that loads and runs nothing, which any
// site may show), and errors drawn as badges (BadgeError).
func (g *Guard) Badges(c *fiber.Ctx) error {
	c.Set(fiber.HeaderContentSecurityPolicy, render.BadgeCSP)
	c.Set(fiber.HeaderXContentTypeOptions, "nosniff")
	c.Set(fiber.HeaderCrossOriginResourcePolicy, "cross-origin")
	err := g.limit(c)
	if err == nil {
		err = c.Next()
	}
	if err != nil {
		return BadgeError(c, err)
	}
	return nil
}

// badgeWords are what an error badge says of its status.
var badgeWords = map[int]string{http.StatusNotFound: "not found", http.StatusTooManyRequests: "slow down", http.StatusServiceUnavailable: "not ready",
	http.StatusBadRequest: "bad address", http.StatusMethodNotAllowed: "GET only"}

// BadgeError writes err as a badge of its status (a 404 badge for an
// unknown listing), its title the reader's words, never cached, so an
// image tag shows why where the figure would be.
func BadgeError(c *fiber.Ctx, err error) error {
	p, ok := problemOf(err)
	if !ok {
		return err // the server's error handler logs it and answers 500
	}
	words, known := badgeWords[p.Status]
	if !known {
		words = "error " + strconv.Itoa(p.Status)
	}
	body := render.RenderBadge(render.Badge{Label: "badge", Message: words, Color: render.BadgeRed, Title: ReaderText(p)})
	if r := p.Header(fiber.HeaderRetryAfter); r != "" {
		c.Set(fiber.HeaderRetryAfter, r)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, "image/svg+xml; charset=utf-8")
	c.Response().Header.Del(fiber.HeaderETag)
	return c.Status(p.Status).Send(body)
}

// limit applies the bound, and tells the replay path how (package
// ratelimit), as the legacy API's fair use does.
func (g *Guard) limit(c *fiber.Ctx) error {
	if access.Internal(c) {
		return nil
	}
	a := g.cfg.Proxies.Of(c)
	if !g.fair.On() || g.cfg.Exempt.Contains(a) {
		if ratelimit.Wanted(c.Context()) {
			ratelimit.Apply(c.Context(), ratelimit.Applied{Caller: a, Admit: g.admit})
		}
		return nil
	}
	if ok, wait := g.fair.Allow(g.cfg.Proxies.Subject(a), access.RequestTime(c)); !ok {
		secs := problem.Seconds(wait)
		// The page says when to come back (from Retry-After): the detail
		// says why, once.
		return problem.Newf(http.StatusTooManyRequests,
			"Too many pages were asked for from your address in a short time: slow down, and ask again after the Retry-After wait (%s).", seconds(secs)).RetryAfter(secs).
			ForReaders("Too many pages were asked for from your address in a short time: slow down a little.")
	}
	ratelimit.Apply(c.Context(), ratelimit.Applied{Caller: a, Admit: g.admit})
	return nil
}

// replayAdmit applies the bound to a replayed page (package replay).
func (g *Guard) replayAdmit(caller netip.Addr, now time.Time) (ratelimit.Decision, bool) {
	if !g.fair.On() || g.cfg.Exempt.Contains(caller) {
		return ratelimit.Decision{}, true
	}
	ok, _ := g.fair.Allow(g.cfg.Proxies.Subject(caller), now)
	return ratelimit.Decision{}, ok
}

// problemOf is err as a problem (a fiber error as one of its status);
// ok is false for any other error.
func problemOf(err error) (p *problem.Problem, ok bool) {
	var fe *fiber.Error
	switch {
	case errors.As(err, &p):
		return p, true
	case errors.As(err, &fe):
		return problem.New(fe.Code, fe.Message), true
	}
	return nil, false
}

// Error writes err as an HTML page of its status: what happened and what
// to do in a reader's words (ReaderText), and when to come back
// (Retry-After), never cached. The problem's detail, written for API
// clients, is not shown.
func Error(c *fiber.Ctx, err error) error {
	p, ok := problemOf(err)
	if !ok {
		return err // the server's error handler logs it and answers 500
	}
	body, rerr := render.RenderSearchError(p.Status, ReaderText(p), p.Header(fiber.HeaderRetryAfter), searchForm(c))
	if rerr != nil {
		return rerr
	}
	if r := p.Header(fiber.HeaderRetryAfter); r != "" {
		c.Set(fiber.HeaderRetryAfter, r)
	}
	Headers(c)
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, fiber.MIMETextHTMLCharsetUTF8)
	c.Response().Header.Del(fiber.HeaderETag)
	return c.Status(p.Status).Send(body)
}

// searchForm is what an error page's search form keeps of the request:
// on the listings' browser, the words searched for and its other filters
// (every filter of the read)
// (a search too short keeps them, to search again); elsewhere nothing.
func searchForm(c *fiber.Ctx) render.SearchForm {
	if c.Path() != "/listings" {
		return render.SearchForm{}
	}
	var f render.SearchForm
	for _, k := range append([]string{"store", "category", "tag", "sort", "order", "compare", "kind", "hostAccess", "minSize", "maxSize"}, listargs.SharedNames...) {
		if v := c.Query(k); v != "" && len(v) <= 200 {
			f.Keep = append(f.Keep, render.Option{Value: k, Label: v})
		}
	}
	if q := c.Query("q"); len(q) <= 200 {
		f.Q = q
	}
	return f
}

// Pages returns the app's error handler: a browser's request (its Accept
// prefers HTML to JSON) for a path outside the programs' (programPaths)
// that no page route answered (an unknown page, a method the pages do not
// take, an address too long) gets a page (Error); every other request the
// problem+json of next.
func Pages(log *slog.Logger, next fiber.ErrorHandler) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		if !wantsPage(c) {
			return next(c, err)
		}
		return Error(c, problem.Of(c, log, err))
	}
}

// programPaths are the paths of the routes for programs (and everything
// under them), whose errors are problem+json whatever the Accept.
var programPaths = []string{"/api", "/mcp", "/account", "/metrics", "/healthz", "/readyz"}

// wantsPage reports whether c is a browser's request for a page: a path
// outside programPaths, asked for with an Accept that prefers HTML.
func wantsPage(c *fiber.Ctx) bool {
	path := c.Path()
	for _, p := range programPaths {
		if path == p || strings.HasPrefix(path, p+"/") {
			return false
		}
	}
	return accept.Prefers(c.Request().Header.Peek(fiber.HeaderAccept), fiber.MIMETextHTML, fiber.MIMEApplicationJSON)
}

// seconds says n seconds in words.
func seconds(n int) string {
	if n == 1 {
		return "a second"
	}
	return strconv.Itoa(n) + " seconds"
}

// ReaderText is what the page of problem p says of it: its reader's text
// (problem.Problem.ForReaders), else what its status means to a reader.
func ReaderText(p *problem.Problem) string {
	if t := p.ReaderText(); t != "" {
		return t
	}
	if t, ok := statusTexts[p.Status]; ok {
		return t
	}
	return "This page cannot be shown."
}

// statusTexts are the pages' words for a problem without a reader's text
// of its own, by status.
var statusTexts = map[int]string{
	http.StatusBadRequest:          "This page cannot be shown for this address: a part of it is not one these pages understand.",
	http.StatusNotFound:            "There is no page at this address. Search for a listing, or start from the stores.",
	http.StatusMethodNotAllowed:    "Pages here can only be opened: nothing can be sent to this address.",
	http.StatusNotAcceptable:       "This page cannot be sent in a form your browser accepts.",
	http.StatusRequestURITooLong:   "This address is too long to read: search with fewer words.",
	http.StatusTooManyRequests:     "Too many pages were asked for in a short time: slow down a little.",
	http.StatusInternalServerError: "The server failed to make this page. Try again later.",
	http.StatusServiceUnavailable:  "This page cannot be made just now: the server is busy.",
}
