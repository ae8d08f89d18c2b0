package edge_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/limits"
)

// BenchmarkCachedAnswerAccess is the server's CPU cost of a cached v1
// answer (200, and 304 to If-None-Match) without limits, with limits and
// no key, and with a key: the fiber handler called directly, so nothing
// but the server is measured.
func BenchmarkCachedAnswerAccess(b *testing.B) {
	cfg := seeded(b)
	high := limits.Policy{PerMinute: 1 << 30, PerDay: 1 << 40}
	open := start(b, cfg, func(c *edge.Config) { c.NoLimits = true })
	limited := start(b, cfg, withLimits(high, high))
	for _, h := range []*harness{open, limited} {
		if err := h.Jobs.RunNow("views"); err != nil {
			b.Fatal(err)
		}
	}
	key, _ := signUpWithKey(b, limited, "bench@example.com")
	for _, c := range []struct {
		name   string
		h      *harness
		header string
	}{{"no-limits", open, ""}, {"anonymous", limited, ""}, {"key", limited, "Bearer " + key}} {
		handler := c.h.Server.App().Handler()
		var first fasthttp.RequestCtx
		first.Request.SetRequestURI("/api/v1/categories/chrome")
		handler(&first)
		etag := string(first.Response.Header.Peek("ETag"))
		if etag == "" {
			b.Fatalf("no ETag: %d %s", first.Response.StatusCode(), first.Response.Body())
		}
		for _, status := range []int{fasthttp.StatusOK, fasthttp.StatusNotModified} {
			b.Run(c.name+"/"+strconv.Itoa(status), func(b *testing.B) {
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					var ctx fasthttp.RequestCtx
					for pb.Next() {
						ctx.Request.Reset()
						ctx.Response.Reset()
						ctx.Request.SetRequestURI("/api/v1/categories/chrome")
						if c.header != "" {
							ctx.Request.Header.Set("Authorization", c.header)
						}
						if status == fasthttp.StatusNotModified {
							ctx.Request.Header.Set("If-None-Match", etag)
						}
						handler(&ctx)
						if ctx.Response.StatusCode() != status {
							b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
						}
					}
				})
			})
		}
	}
}

// BenchmarkCachedAnswerRoutes is the server's CPU cost of a cached answer
// (a 304, so that only the handler is measured) on the routes the
// dashboards call most, with the limits on and no key: the fiber handler
// called directly.
func BenchmarkCachedAnswerRoutes(b *testing.B) {
	high := limits.Policy{PerMinute: 1 << 30, PerDay: 1 << 40}
	h := start(b, synthetic(b), withLimits(high, high), func(c *edge.Config) { c.FairUseRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		b.Fatal(err)
	}
	handler := h.Server.App().Handler()
	for _, path := range []string{"/api/v1/categories/chrome", "/api/v1/listings", "/api/v1/listings?store=chrome&sort=rating&limit=20",
		"/api/summary", "/api/extensions?platform=0"} {
		var first fasthttp.RequestCtx
		first.Request.SetRequestURI(path)
		handler(&first)
		etag := string(first.Response.Header.Peek("ETag"))
		if etag == "" {
			b.Fatalf("%s: no ETag: %d %s", path, first.Response.StatusCode(), first.Response.Body())
		}
		b.Run(strings.TrimPrefix(path, "/api/"), func(b *testing.B) {
			b.ReportAllocs()
			var ctx fasthttp.RequestCtx
			for b.Loop() {
				ctx.Request.Reset()
				ctx.Response.Reset()
				ctx.Request.SetRequestURI(path)
				ctx.Request.Header.SetMethod("GET")
				ctx.Request.Header.Set("If-None-Match", etag)
				handler(&ctx)
				if ctx.Response.StatusCode() != fasthttp.StatusNotModified {
					b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
		})
	}
}

// BenchmarkToolCall compares a tools/call of a cached read with the REST
// answer to the same read, the fiber handler called directly.
func BenchmarkToolCall(b *testing.B) {
	cfg := synthetic(b)
	high := limits.Policy{PerMinute: 1 << 30, PerDay: 1 << 40}
	h := start(b, cfg, withLimits(high, high))
	if err := h.Jobs.RunNow("views"); err != nil {
		b.Fatal(err)
	}
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"store_stats","arguments":{"store":"chrome"}}}`)
	for _, c := range []struct {
		name, method, uri string
		body              []byte
	}{{"rest", "GET", "/api/v1/stores/chrome/stats", nil}, {"tools-call", "POST", "/mcp", body}} {
		b.Run(c.name, func(b *testing.B) {
			handler := h.Server.App().Handler()
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var req fasthttp.Request
				req.Header.SetMethod(c.method)
				req.SetRequestURI(c.uri)
				if c.body != nil {
					req.Header.SetContentType("application/json")
					req.Header.Set("Accept", "application/json, text/event-stream")
					req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
					req.SetBody(c.body)
				}
				var ctx fasthttp.RequestCtx
				for pb.Next() {
					ctx.Response.Reset()
					ctx.Init(&req, nil, nil) // a context with a (fake) server, as a served request has
					handler(&ctx)
					if ctx.Response.StatusCode() != 200 {
						b.Fatalf("%d %s", ctx.Response.StatusCode(), ctx.Response.Body())
					}
				}
			})
		})
	}
}
