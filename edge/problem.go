package edge

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/keys"
)

// Problem is an RFC 9457 problem detail. It is also an error, so handlers
// return it and the app's error handler writes it.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail"`
	Instance string `json:"instance,omitempty"`

	headers map[string]string // extra response headers, such as Retry-After
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

// NewProblem returns a problem with the given status and a detail that
// says what the caller should change.
func NewProblem(status int, detail string) *Problem {
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}
}

// Problemf is NewProblem with a formatted detail.
func Problemf(status int, format string, args ...any) *Problem {
	return NewProblem(status, fmt.Sprintf(format, args...))
}

// WithHeader returns p with a response header to send along.
func (p *Problem) WithHeader(name, value string) *Problem {
	if p.headers == nil {
		p.headers = map[string]string{}
	}
	p.headers[name] = value
	return p
}

// RetryAfter returns p with a Retry-After header of the given seconds.
func (p *Problem) RetryAfter(seconds int) *Problem {
	return p.WithHeader(fiber.HeaderRetryAfter, strconv.Itoa(seconds))
}

// errorHandler turns every error a handler or fiber returns into
// problem+json. Unknown errors are logged and answered 500 without detail
// of their cause.
func errorHandler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error {
		var p *Problem
		var fe *fiber.Error
		switch {
		case errors.As(err, &p):
		case errors.As(err, &fe):
			p = NewProblem(fe.Code, fiberDetail(c, fe))
		default:
			log.Error("request failed", "method", c.Method(), "path", keys.Redact(c.Path()), "err", err)
			p = NewProblem(http.StatusInternalServerError, "The server failed to answer. Try again later; if it persists, report it with the time of the request.")
		}
		p.Instance = c.Path()
		return writeProblem(c, p)
	}
}

func writeProblem(c *fiber.Ctx, p *Problem) error {
	body, err := json.Marshal(p)
	if err != nil {
		return err
	}
	for k, v := range p.headers {
		c.Set(k, v)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, "application/problem+json")
	return c.Status(p.Status).Send(body)
}

func fiberDetail(c *fiber.Ctx, fe *fiber.Error) string {
	switch fe.Code {
	case http.StatusNotFound:
		return fmt.Sprintf("There is nothing at %s. Check the path against /api/v1/openapi.json.", c.Path())
	case http.StatusMethodNotAllowed:
		return fmt.Sprintf("%s is not allowed here; use one of: %s.", c.Method(), string(c.Response().Header.Peek(fiber.HeaderAllow)))
	}
	return fe.Message
}
