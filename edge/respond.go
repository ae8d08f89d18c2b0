package edge

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/ratelimit"
	"github.com/edge-stats/edge/edge/replay"
)

// responder is the one responder of every route's answer: it sends each
// answer (answer.Responder) and tells the replay path, when the server
// has one, everything it may record of it in one call (replay.Answered):
// what was sent, the limit the route applied (ratelimit.Apply) and the
// route's metrics as observe counts them. An answer sent to a request no
// limit was applied to is not recorded.
func (s *Server) responder() answer.Responder {
	return answer.Responder{Record: func(c *fiber.Ctx, e replay.Entry) {
		if s.replay == nil {
			return
		}
		var ok bool
		if e.Limit, ok = ratelimit.AppliedTo(c.Context()); !ok {
			return
		}
		status := c.Response().StatusCode()
		if e.Count, e.Latency = s.metrics.handles(routeOf(c, status), status); e.Count == nil {
			return
		}
		replay.Answered(c.Context(), e)
	}}
}
