package account

import (
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/problem"
)

// crossSite refuses a request that changes an account (any method but
// GET, HEAD and OPTIONS, under /account) when a browser sent it from
// another site: the browser would attach the HTTP Basic credentials it
// keeps for the edge, so a page elsewhere could make keys or webhooks in
// its visitors' accounts. Such a request passes when it comes from this
// site, or when its Content-Type is JSON, which a browser sends across
// sites only after a preflight that /account never grants (no CORS).
// A request with neither Sec-Fetch-Site nor Origin is not a browser's
// cross-site request (browsers send Origin with every cross-origin POST
// and DELETE), so curl and programs need neither header; the rules are
// those of Go's net/http.CrossOriginProtection.
func (s *API) crossSite(c *fiber.Ctx) error {
	switch c.Method() {
	case fiber.MethodGet, fiber.MethodHead, fiber.MethodOptions:
		return c.Next()
	}
	if s.fromThisSite(c) || isJSON(c.Get(fiber.HeaderContentType)) {
		return c.Next()
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	return problem.New(http.StatusForbidden, "This request changes an account and comes from another site (its Origin or Sec-Fetch-Site says so), "+
		"which may not use a browser's sign-in here. From a program, send it with the header Content-Type: application/json (the body may be empty) "+
		"or without an Origin header; from a browser, from this service's own origin.")
}

// fromThisSite reports whether the request comes from this service's
// own origin, or from no browser page at all.
func (s *API) fromThisSite(c *fiber.Ctx) bool {
	switch c.Get("Sec-Fetch-Site") {
	case "same-origin", "none": // "none": the user's own act (the address bar, a bookmark)
		return true
	case "":
	default: // cross-site, same-site (a sibling host)
		return false
	}
	origin := c.Get(fiber.HeaderOrigin)
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" (a sandboxed or opaque origin) among them
	}
	if strings.EqualFold(u.Host, string(c.Request().Host())) {
		return true
	}
	// Behind a proxy that rewrites Host, the service's public address.
	pub, err := url.Parse(s.cfg.PublicURL)
	return err == nil && pub.Host != "" && strings.EqualFold(u.Host, pub.Host)
}
