package edge

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/adaptor"
	"github.com/gofiber/fiber/v2/middleware/cors"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/access"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/mcp"
)

// mcpHeaders are the request headers browser-based MCP clients may send.
const mcpHeaders = "Authorization, X-Api-Key, Content-Type, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID"

// mountTools routes /mcp to the tool server, behind CORS, the key check
// and the limits.
func (s *Server) mountTools(version string) error {
	tools, err := mcp.New(version, s.v1.OpenAPIAnswer().Body, s.answerInternal, s.viewGeneration, s.log)
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
	s.app.All("/mcp", s.toolGate, adaptor.HTTPHandler(tools))
	return nil
}

// toolGate applies keys and limits to a request to /mcp: every request
// counts against the caller's minute, and each tools/call in it against
// the day. GET and DELETE (streams and sessions, which a stateless server
// has not) answer 405.
func (s *Server) toolGate(c *fiber.Ctx) error {
	who, err := s.gate.Identify(c)
	if err != nil {
		return err
	}
	now := access.RequestTime(c)
	if err := s.gate.Apply(c, who, s.limits.AdmitMinute(who.Subject, who.Key.DailyLimit, now)); err != nil {
		return err
	}
	if c.Method() != fiber.MethodPost {
		c.Set(fiber.HeaderAllow, "POST, OPTIONS")
		return problem.New(http.StatusMethodNotAllowed,
			"The tool server is stateless: it offers no event stream (GET) and no session to end (DELETE). Send JSON-RPC requests with POST.")
	}
	// A plain tools/call is answered here (see mcp.FastCall); anything else
	// by the SDK.
	var call *mcp.Call
	if !s.cfg.SDKOnlyTools && strings.HasPrefix(c.Get(fiber.HeaderContentType), fiber.MIMEApplicationJSON) {
		call, _ = s.tools.ParseCall(c.Body(), func(k string) string { return c.Get(k) })
	}
	calls := 1
	if call == nil {
		calls = toolCalls(c.Body())
		s.metrics.toolCalls.WithLabelValues("sdk").Add(float64(calls))
	}
	for range calls {
		if err := s.gate.Apply(c, who, s.limits.CountDay(who.Subject, who.Key.DailyLimit, now)); err != nil {
			return err
		}
	}
	if call != nil {
		s.metrics.toolCalls.WithLabelValues("fast").Inc()
		c.Set(fiber.HeaderContentType, fiber.MIMEApplicationJSON)
		return c.Send(s.tools.FastCall(c.UserContext(), call))
	}
	// Some clients accept JSON only; every answer here is JSON.
	if accept := c.Get(fiber.HeaderAccept); !strings.Contains(accept, "text/event-stream") {
		c.Request().Header.Set(fiber.HeaderAccept, "application/json, text/event-stream")
	}
	return c.Next()
}

// toolCalls returns the number of tools/call requests in a JSON-RPC body
// (a message or, before protocol 2025-06-18, a batch).
func toolCalls(body []byte) int {
	type message struct {
		Method string `json:"method"`
	}
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		var batch []message
		if json.Unmarshal(body, &batch) != nil {
			return 0
		}
		n := 0
		for _, m := range batch {
			if m.Method == "tools/call" {
				n++
			}
		}
		return n
	}
	var m message
	if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
		return 1
	}
	return 0
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
	access.MarkInternal(rc)
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
