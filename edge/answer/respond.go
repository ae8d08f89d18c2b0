package answer

import (
	"errors"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/edge/replay"
)

// Reply is what a route answers: an answer and how it is sent.
type Reply struct {
	Answer       *Answer
	CacheControl string // Private, Public(...) or a route's own
	// VaryAccept says the route chose the answer by the request's Accept
	// header (JSON or CSV, a page or its JSON form): Vary then names it.
	VaryAccept bool
	// Page says where the answer's page for people is, for its Link
	// header (NoPage: none).
	Page Page
}

// Handler is a route that finds or computes its answer and returns it for
// a Responder to send. It writes no body itself; it may set headers of
// its own (a Content-Security-Policy). An error is a problem the server's
// error handler writes.
type Handler func(c *fiber.Ctx) (Reply, error)

// ErrPass is what a Handler returns to hand the request on to the next
// route that matches it (fiber.Ctx.Next).
var ErrPass = errors.New("answer: passed to the next route")

// sent is what the responder sent of an answer: its content coding, the
// order codings were chosen in (best: the answer's best variants were
// made), and the body written (nil for a 304).
type sent struct {
	variant coding.Coding
	best    bool
	body    []byte
}

// Responder sends every route's answer in one place: content coding,
// validators and 304, Cache-Control, Vary, the Link to the definitions,
// sendfile for large bodies. It is the one place that tells the replay
// path (package replay) what it may record, so that a replayed answer
// cannot drift from the answer the full path sends.
type Responder struct {
	// Record, when set, is called after each answer the cache holds is
	// sent whole or as a 304 to a request the replay path may record
	// (replay.Noting), with what was sent: the answer, its coding, and
	// the body written (nil for a 304).
	Record func(c *fiber.Ctx, sent replay.Entry)
}

// Handle returns the fiber handler of h: h's reply, sent.
func (r Responder) Handle(h Handler) fiber.Handler {
	return func(c *fiber.Ctx) error {
		reply, err := h(c)
		if err != nil {
			if err == ErrPass {
				return c.Next()
			}
			return err
		}
		a := reply.Answer
		defer a.recycle()
		out, err := send(c, a, reply.CacheControl, reply.Page, reply.VaryAccept)
		if err != nil {
			return err
		}
		if r.Record != nil && a.home != nil && !a.NoStore && replay.Noting(c.Context()) {
			r.Record(c, replay.Entry{Answer: a, Variant: int(out.variant), Best: out.best, Body: out.body})
		}
		return nil
	}
}
