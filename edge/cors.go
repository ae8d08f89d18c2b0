package edge

import (
	"errors"
	"net/http"

	"github.com/gofiber/fiber/v2"
)

// CORS of the two APIs (/api/v1 and /api): every origin may read them,
// as dashboards on other sites are what they are for. Answers are the
// same whatever the origin, so Access-Control-Allow-Origin is "*" on every
// answer (problems included, so that a page can read why a call was
// refused) and a CDN may keep one copy for every origin, with no Vary on
// Origin. A browser sends no cookies with "*", and the API reads none:
// keys go in Authorization or X-Api-Key, which a page sets itself.
//
// A preflight (OPTIONS) is answered here, before keys and limits, so it
// counts against no limit. /account is left out on purpose (docs/api-v1.md,
// CORS): a page elsewhere could otherwise have each of its visitors'
// browsers try passwords against sign-in, each from its own address.
var (
	corsOrigin  = []byte("Access-Control-Allow-Origin")
	corsExpose  = []byte("Access-Control-Expose-Headers")
	corsAny     = []byte("*")
	corsExposed = []byte("ETag, Last-Modified, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy, Retry-After")
)

// Preflight answers: what a page may send, and for how long a browser may
// keep the answer (Chromium keeps it at most 2 hours, Firefox a day).
const (
	corsMethods = "GET, HEAD"
	corsHeaders = "Authorization, X-Api-Key, If-None-Match, If-Modified-Since, Range, If-Range"
	corsMaxAge  = "7200"
)

// apiCORS adds the CORS headers of the APIs to every answer under its mount
// point and answers preflights.
func apiCORS(c *fiber.Ctx) error {
	if c.Context().IsOptions() {
		h := &c.Response().Header
		h.SetCanonical(corsOrigin, corsAny)
		h.Set(fiber.HeaderAccessControlAllowMethods, corsMethods)
		h.Set(fiber.HeaderAccessControlAllowHeaders, corsHeaders)
		h.Set(fiber.HeaderAccessControlMaxAge, corsMaxAge)
		h.Set(fiber.HeaderAllow, "GET, HEAD, OPTIONS")
		c.Status(fiber.StatusNoContent)
		return nil
	}
	h := &c.Response().Header
	h.SetCanonical(corsOrigin, corsAny)
	h.SetCanonical(corsExpose, corsExposed)
	err := c.Next()
	allowOptions(c, err)
	return err
}

// allowOptions adds OPTIONS to the Allow header of a 405 under the APIs:
// fiber's router names the methods of the routes of the path (GET and the
// HEAD it adds), but every address under /api also answers OPTIONS here,
// before the routes, so a client told what it may send is told all of it.
func allowOptions(c *fiber.Ctx, err error) {
	var fe *fiber.Error
	if !errors.As(err, &fe) || fe.Code != http.StatusMethodNotAllowed {
		return
	}
	h := &c.Response().Header
	if allow := string(h.Peek(fiber.HeaderAllow)); allow != "" {
		h.Set(fiber.HeaderAllow, allow+", "+fiber.MethodOptions)
	}
}
