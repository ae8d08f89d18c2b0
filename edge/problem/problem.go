// Package problem is the edge's errors as RFC 9457 problem details: a
// Problem is an error a handler returns, and Handler, the app's error
// handler, writes every error as application/problem+json with a detail
// that says what to change.
package problem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/apikey"
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
	reader  string            // the detail in a reader's words, for a page (ForReaders)
}

func (p *Problem) Error() string { return fmt.Sprintf("%d %s: %s", p.Status, p.Title, p.Detail) }

// New returns a problem with the given status and a detail that
// says what the caller should change.
func New(status int, detail string) *Problem {
	return &Problem{Type: "about:blank", Title: http.StatusText(status), Status: status, Detail: detail}
}

// Newf is New with a formatted detail.
func Newf(status int, format string, args ...any) *Problem {
	return New(status, fmt.Sprintf(format, args...))
}

// WithHeader returns p with a response header to send along.
func (p *Problem) WithHeader(name, value string) *Problem {
	if p.headers == nil {
		p.headers = map[string]string{}
	}
	p.headers[name] = value
	return p
}

// Header returns the value of a response header p sends along ("" for
// none).
func (p *Problem) Header(name string) string { return p.headers[name] }

// ForReaders returns p with its detail in a reader's words: what a
// person who opened a page (package pages/guard) reads in place of the
// detail, which is written for API clients and names the API's paths,
// parameters and fields. It says what is wrong and what to do on the
// pages, in words alone; the problem+json is unchanged.
func (p *Problem) ForReaders(text string) *Problem {
	p.reader = text
	return p
}

// ReaderText returns the detail of p in a reader's words ("" for none:
// the page then says what its status means).
func (p *Problem) ReaderText() string { return p.reader }

// RetryAfter returns p with a Retry-After header of the given seconds.
func (p *Problem) RetryAfter(seconds int) *Problem {
	return p.WithHeader(fiber.HeaderRetryAfter, strconv.Itoa(seconds))
}

// Handler turns every error a handler or fiber returns into
// problem+json. Unknown errors are logged and answered 500 without detail
// of their cause.
func Handler(log *slog.Logger) fiber.ErrorHandler {
	return func(c *fiber.Ctx, err error) error { return Write(c, Of(c, log, err)) }
}

// Of returns the problem to answer c with for err, with its instance:
// err's own problem, a fiber error's (with a detail that says what to
// change), or, for any other error, which it logs, a 500 without detail
// of its cause.
func Of(c *fiber.Ctx, log *slog.Logger, err error) *Problem {
	var p *Problem
	var fe *fiber.Error
	switch {
	case errors.As(err, &p):
	case errors.As(err, &fe):
		p = New(fe.Code, fiberDetail(c, fe))
	default:
		log.Error("request failed", "method", c.Method(), "path", apikey.Redact(c.Path()), "err", err)
		p = New(http.StatusInternalServerError, "The server failed to answer. Try again later; if it persists, report it with the time of the request.")
	}
	// A copy: one problem may be the answer of several requests (a
	// refusal shared by the misses that waited for one build).
	cp := *p
	// Neither may quote a key a client put in its path (or a detail
	// naming a path's part), whole or percent-encoded.
	cp.Instance, cp.Detail = apikey.RedactEncoded(c.Path()), apikey.RedactEncoded(cp.Detail)
	return &cp
}

// Write writes p as c's response: its status, its headers and its
// problem+json body, never cached.
func Write(c *fiber.Ctx, p *Problem) error {
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

// WriteAs writes p's status and headers with a body of another shape
// than problem+json (a JSON-RPC error, for the tool server's clients),
// never cached.
func WriteAs(c *fiber.Ctx, p *Problem, contentType string, body []byte) error {
	for k, v := range p.headers {
		c.Set(k, v)
	}
	c.Set(fiber.HeaderCacheControl, "no-store")
	c.Set(fiber.HeaderContentType, contentType)
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

// NotReady is the answer for a figure computed in the background that is
// not built yet after a restart: 503 with Retry-After 60. what names the
// figures ("Charts are").
func NotReady(what string) *Problem {
	return Newf(http.StatusServiceUnavailable,
		"%s computed in the background after a restart and not ready yet. Retry in a minute.", what).RetryAfter(60).
		ForReaders(what + " computed after a restart and not ready yet.")
}

// ReadFailed is the answer when a read from ClickHouse on a request's
// behalf fails: 503 with Retry-After 5, saying whether the time budget
// ran out. what names what was read ("the history").
func ReadFailed(what string, err error) *Problem {
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Timeout exceeded") {
		return Newf(http.StatusServiceUnavailable, "Reading %s took longer than the time budget; narrow the request or retry in a few seconds.", what).RetryAfter(5).
			ForReaders(Sentence(what) + " took too long to read just now.")
	}
	return Newf(http.StatusServiceUnavailable, "%s cannot be read for a moment; retry in a few seconds.", Sentence(what)).RetryAfter(5).
		ForReaders(Sentence(what) + " cannot be read just now.")
}

// Sentence returns s with its first letter in upper case.
func Sentence(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// Seconds rounds d up to whole seconds, at least 1, as Retry-After gives
// them.
func Seconds(d time.Duration) int { return max(int(math.Ceil(d.Seconds())), 1) }
