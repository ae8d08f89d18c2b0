package edge

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/cors"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/accept"
	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/coding"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/mcp"
)

// mcpHeaders are the request headers browser-based MCP clients may send.
const mcpHeaders = "Authorization, X-Api-Key, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID"

// mountTools routes /mcp to the tool server, behind CORS, the key check
// and the limits.
func (s *Server) mountTools(version string) error {
	tools, err := mcp.New(version, s.v1.OpenAPIAnswer().Body, s.answerInternal, s.chargeTool, s.viewGeneration, s.log)
	if err != nil {
		return err
	}
	s.tools = tools
	s.internalCtxs.New = func() any { return new(fasthttp.RequestCtx) }
	s.app.Use("/mcp", cors.New(cors.Config{
		AllowOrigins:  "*",
		AllowMethods:  "POST, GET, DELETE, OPTIONS",
		AllowHeaders:  mcpHeaders,
		ExposeHeaders: "Mcp-Session-Id, WWW-Authenticate, Retry-After, RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset, RateLimit-Policy",
		MaxAge:        3600,
	}))
	s.app.All("/mcp", compressFast, s.toolGate, adaptor.HTTPHandler(s.boundTools(tools)))
	return nil
}

// compressFast compresses the answer of a request to /mcp, made for that
// request alone, at the fast level in the coding its Accept-Encoding
// prefers (coding.Choose; zstd first at equal weight), when it is 1 KiB or
// more (tools/list, most tool results). A request that refuses identity and
// every coding gets the answer as it is: a tool call is never refused for
// its Accept-Encoding. Problems go out as they are.
func compressFast(c *fiber.Ctx) error {
	if err := c.Next(); err != nil {
		return err
	}
	resp := &c.Response().Header
	body := c.Response().Body()
	if c.Response().IsBodyStream() || len(resp.Peek(fiber.HeaderContentEncoding)) > 0 || len(body) < answer.MinCompressSize {
		return nil
	}
	resp.Add(fiber.HeaderVary, fiber.HeaderAcceptEncoding)
	ae := c.Request().Header.Peek(fiber.HeaderAcceptEncoding)
	enc, ok := coding.Choose(ae, len(ae) > 0, coding.All, coding.FastFirst)
	if !ok || enc == coding.Identity {
		return nil
	}
	z, err := coding.Compress(enc, coding.Fast, body)
	if err != nil {
		return fmt.Errorf("compress the tool server's answer: %w", err)
	}
	c.Response().SetBodyRaw(z)
	resp.Set(fiber.HeaderContentEncoding, enc.String())
	return nil
}

// toolGate applies keys and limits to a request to /mcp, and answers
// its refusals as JSON-RPC errors (see toolRefusal). A request that runs
// something (a POST with a request in it) counts against the caller's
// minute, and each tool call it runs against the day; a GET or DELETE
// probe (streams and sessions, which a stateless server has not: 405)
// and a POST of notifications only (202) run nothing and count nothing,
// though a key they send is still checked. What runs and what counts
// follow from one parse: the body is screened (one JSON value, shallow,
// batches only where the protocol has them); a plain tools/call is then
// counted here and answered by mcp.FastCall, and anything else goes to
// the SDK, whose tool handlers charge each call they run through
// chargeTool.
func (s *Server) toolGate(c *fiber.Ctx) error {
	err := s.gateTools(c)
	var p *problem.Problem
	if errors.As(err, &p) {
		return s.toolRefusal(c, p)
	}
	return err
}

// toolRefusal answers a refused request to /mcp with the problem's HTTP
// status and headers (Retry-After, WWW-Authenticate, RateLimit-*) and a
// JSON-RPC error body that carries the detail, for the request's id: a
// JSON-RPC client reads why it was refused (problem+json reached them as
// "unexpected end of JSON input"). A 401 names the Bearer scheme with
// error="invalid_token" and no resource_metadata, and the OAuth metadata
// paths answer 404: the edge offers no OAuth, and a client following the
// MCP authorization spec finds nothing to start a flow with.
func (s *Server) toolRefusal(c *fiber.Ctx, p *problem.Problem) error {
	retry, _ := strconv.Atoi(p.Header(fiber.HeaderRetryAfter))
	var req []byte // a GET or DELETE has no request to answer: id null
	if c.Method() == fiber.MethodPost {
		req = c.Body()
	}
	return problem.WriteAs(c, p, fiber.MIMEApplicationJSON, mcp.Refusal(req, p.Status, p.Detail, retry))
}

// maxToolHold bounds how long a request to /mcp may run, beyond the read
// budgets of the reads it may make: a request the SDK would hold open
// (a subscription on a server with nothing to push) is answered by then.
const maxToolHold = 5 * time.Second

// boundTools runs the tool server's handler under a deadline: its reads'
// budgets plus maxToolHold. The deadline's context keeps the request's
// values (the caller the gate identified) but not its cancellation: the
// request's context is fasthttp's RequestCtx, whose Done may not be
// watched from another goroutine while the server shuts down (a data
// race in fasthttp), and the deadline bounds the handler anyway.
func (s *Server) boundTools(h http.Handler) http.Handler {
	hold := s.cfg.ReadBudget + s.cfg.SearchBudget + maxToolHold
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), hold)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

func (s *Server) gateTools(c *fiber.Ctx) error {
	who, err := s.gate.Identify(c)
	if err != nil {
		return err
	}
	now := access.RequestTime(c)
	if c.Method() != fiber.MethodPost {
		c.Set(fiber.HeaderAllow, "POST, OPTIONS")
		return problem.New(http.StatusMethodNotAllowed,
			"The tool server is stateless: it offers no event stream (GET) and no session to end (DELETE). Send JSON-RPC requests with POST.")
	}
	// A body refused by the screen counts against the minute, as a
	// request does: only a well-formed POST of notifications is free.
	refusal := mcp.Screen(c.Body(), c.Get("Mcp-Protocol-Version"))
	if refusal != nil || !mcp.OnlyNotifications(c.Body()) {
		if err := s.gate.Apply(c, who, s.limits.AdmitMinute(who.Subject, who.Key.DailyLimit, now)); err != nil {
			return err
		}
	}
	if refusal != nil {
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Status(http.StatusBadRequest).Send(refusal)
	}
	var call *mcp.Call
	if !s.cfg.SDKOnlyTools && strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) {
		call, _ = s.tools.ParseCall(c.Body(), func(k string) string { return c.Get(k) })
	}
	if call != nil {
		if err := s.gate.Apply(c, who, s.limits.CountDay(who.Subject, who.Key.DailyLimit, now)); err != nil {
			return err
		}
		s.metrics.toolCalls.WithLabelValues("fast").Inc()
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(s.tools.FastCall(c.UserContext(), call))
	}
	c.Context().SetUserValue(toolCaller{}, &toolCharge{who: who, now: now})
	// Some clients accept JSON only; every answer here is JSON, but the
	// SDK wants an Accept that names both.
	if accept.Quality(c.Request().Header.Peek(fiber.HeaderAccept), "text/event-stream") == 0 {
		c.Request().Header.Set(fiber.HeaderAccept, "application/json, text/event-stream")
	}
	return c.Next()
}

// toolCaller keys the caller of a request to /mcp among the request's
// values, which the SDK's tool handlers see through their context.
type toolCaller struct{}

// toolCharge is who a request to /mcp counts for, and when it came.
type toolCharge struct {
	who access.Caller
	now time.Time
}

// chargeTool counts one tool call that the SDK is about to run against
// the day of the request's caller. A call without a caller (which the
// gate always sets) is refused: nothing runs uncounted.
func (s *Server) chargeTool(ctx context.Context) error {
	ch, _ := ctx.Value(toolCaller{}).(*toolCharge)
	if ch == nil {
		return errors.New("The call has no caller to count it against; send it to /mcp over HTTP.")
	}
	d := s.limits.CountDay(ch.who.Subject, ch.who.Key.DailyLimit, ch.now)
	if p := access.Refusal(ch.who, d); p != nil {
		return errors.New(p.Detail)
	}
	s.metrics.toolCalls.WithLabelValues("sdk").Inc()
	return nil
}

// answerInternal answers a v1 read for the tool server exactly as the REST
// API would: the request runs through the same routes, validation and
// answer cache, without the v1 limits (the tool call was counted).
func (s *Server) answerInternal(ctx context.Context, path string, query url.Values) (int, []byte, bool) {
	rc := s.internalCtxs.Get().(*fasthttp.RequestCtx)
	defer s.internalCtxs.Put(rc)
	req := &rc.Request
	req.Reset()
	rc.Response.Reset()
	req.Header.SetMethod(fiber.MethodGet)
	uri := "/api/v1" + path
	if len(query) > 0 {
		uri += "?" + query.Encode()
	}
	req.SetRequestURI(uri)
	rc.Init2(nil, discardLogger{}, false) // a context as a served request has: a (fake) server and connection
	rc.ResetUserValues()
	if ch, _ := ctx.Value(toolCaller{}).(*toolCharge); ch != nil {
		access.MarkInternalFor(rc, ch.who)
	} else {
		access.MarkInternal(rc)
	}
	s.handler(rc)
	cacheable := !bytes.Contains(rc.Response.Header.Peek(fiber.HeaderCacheControl), []byte("no-store"))
	return rc.Response.StatusCode(), bytes.Clone(rc.Response.Body()), cacheable
}

// viewGeneration names the published views: the replica's generation,
// which every rebuild of figures, charts and read-through caches follows.
func (s *Server) viewGeneration() uint64 {
	if st := s.state.Load(); st != nil {
		return st.Replica.Info().Generation
	}
	return 0
}

// discardLogger drops fasthttp's log lines of internal reads (the server's
// own problems are logged by the app).
type discardLogger struct{}

func (discardLogger) Printf(string, ...any) {}
