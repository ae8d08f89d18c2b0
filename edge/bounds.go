package edge

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/queryonce"
	"github.com/edge-stats/edge/edge/transport"
)

// checkURI refuses a URI longer than MaxURIBytes with 414 on every
// route. (A request line and headers past MaxHeaderBytes never get here:
// fasthttp refuses them with 431, see requestBoundsProblem.)
func (s *Server) checkURI(c *fiber.Ctx) error {
	if n := len(c.Request().RequestURI()); n > s.cfg.MaxURIBytes {
		return problem.Newf(http.StatusRequestURITooLong,
			"The URI is %d bytes, over the %s the edge reads: shorten the query (the filters each take one value; a text query q of a few words finds as much as a long one).",
			n, sizeText(s.cfg.MaxURIBytes))
	}
	return c.Next()
}

// checkOnce refuses a query that gives a parameter more than once with
// 400 (package queryonce), on every route but /healthz, /readyz and
// /metrics (added before it): the handlers read one value of each. It runs after the APIs'
// CORS, so that a page of another site can read the refusal.
func (s *Server) checkOnce(c *fiber.Ctx) error {
	if name, twice := queryonce.Repeated(c.Request().URI().QueryString(), c.Context().QueryArgs); twice {
		return problem.Newf(http.StatusBadRequest,
			"%.40q: the parameter is given more than once; send each parameter once (several values of one, such as kind=a,b, go in it comma-separated).", name).
			ForReaders(fmt.Sprintf("This address gives %.40q more than once: keep one of its values.", name))
	}
	return c.Next()
}

// requestBoundsProblem wraps the error handler: a request refused for its
// size (413, 431) before its body or headers were read gets a detail that
// names the bound, and its connection lingers (transport.Linger), so that
// a client still sending reads the refusal instead of a reset.
func (s *Server) requestBoundsProblem(next fiber.ErrorHandler) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var fe *fiber.Error
		if errors.As(err, &fe) {
			switch fe.Code {
			case http.StatusRequestEntityTooLarge:
				transport.Linger(c.Context())
				err = problem.Newf(fe.Code, "The request body is over the %s the edge reads: send a smaller body (to /mcp, one JSON-RPC message per POST).",
					sizeText(s.cfg.MaxBodyBytes))
			case http.StatusBadRequest:
				// fasthttp's own refusal of a request it could not parse
				// quotes the request, headers and key included: never sent
				// back (nor logged). The edge's own 400s are problems.
				err = problem.New(fe.Code, "The request does not parse as HTTP/1.1 (a header line without a colon, a bad request line, or bytes a header may not hold): send well-formed headers.")
			case http.StatusRequestHeaderFieldsTooLarge:
				transport.Linger(c.Context())
				err = problem.Newf(fe.Code, "The request line and headers are over the %s the edge reads: drop large cookies or headers, and keep the URI within %s.",
					sizeText(s.cfg.MaxHeaderBytes), sizeText(s.cfg.MaxURIBytes))
			}
		}
		return next(c, err)
	}
}

// sizeText writes a byte count as people read a bound: "8 KiB", "1 MiB".
func sizeText(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
