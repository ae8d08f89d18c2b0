package edge_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge/limits"
)

// TestCORS: both APIs may be read from any origin, problems included;
// a preflight answers 204 with what a page may send and counts against
// no limit, however many come; /account allows no other origin.
func TestCORS(t *testing.T) {
	const origin = "https://dashboard.example"
	h := start(t, synthetic(t), withLimits(limits.Policy{PerMinute: 3, PerDay: 1000}, limits.Policy{PerMinute: 1000, PerDay: 1000}))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	fromPage := map[string]string{"Origin": origin}
	readable := func(path string, a answer) {
		t.Helper()
		if got := a.header.Get("Access-Control-Allow-Origin"); got != "*" {
			t.Fatalf("%s: Access-Control-Allow-Origin %q, want *", path, got)
		}
		exposed := a.header.Get("Access-Control-Expose-Headers")
		for _, name := range []string{"ETag", "Last-Modified", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy", "Retry-After"} {
			if !strings.Contains(exposed, name) {
				t.Fatalf("%s: Access-Control-Expose-Headers %q lacks %s", path, exposed, name)
			}
		}
		if strings.Contains(a.header.Get("Vary"), "Origin") {
			t.Fatalf("%s: Vary %q: one copy serves every origin", path, a.header.Get("Vary"))
		}
	}
	preflight := func(path, headers string) answer {
		return call(t, "OPTIONS", h.Base+path, map[string]string{"Origin": origin,
			"Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": headers}, "")
	}

	// Preflights, far more than the minute's 3 calls: each 204, none counted.
	for i := range 20 {
		path := []string{"/api/v1/listings", "/api/v1/tags", "/api/summary", "/api/extensions"}[i%4]
		a := preflight(path, "authorization, if-none-match")
		if a.status != http.StatusNoContent || len(a.body) != 0 || a.header.Get("Access-Control-Allow-Origin") != "*" ||
			a.header.Get("Access-Control-Allow-Methods") != "GET, HEAD" ||
			a.header.Get("Access-Control-Allow-Headers") != "Authorization, X-Api-Key, If-None-Match, If-Modified-Since, Range, If-Range" ||
			a.header.Get("Access-Control-Max-Age") == "" || a.header.Get("RateLimit-Remaining") != "" {
			t.Fatalf("preflight %d of %s: %d %v %q", i, path, a.status, a.header, a.body)
		}
	}
	// Neither the minute nor the day was touched: the minute's three calls
	// pass, with the day's first three (the headers give the day's count).
	for i, path := range []string{"/api/v1/tags", "/api/v1/listings?limit=1", "/api/v1/stores/chrome/stats"} {
		a := call(t, "GET", h.Base+path, fromPage, "")
		if a.status != 200 || a.header.Get("RateLimit-Remaining") != []string{"999", "998", "997"}[i] {
			t.Fatalf("%s after 20 preflights: %d, RateLimit-Remaining %q", path, a.status, a.header.Get("RateLimit-Remaining"))
		}
		readable(path, a)
	}
	// The fourth is refused, and the page can read why.
	refused := call(t, "GET", h.Base+"/api/v1/tags", fromPage, "")
	problem(t, refused, http.StatusTooManyRequests)
	readable("refused /api/v1/tags", refused)
	// The legacy API, and a 304 of it.
	a := call(t, "GET", h.Base+"/api/summary", fromPage, "")
	readable("/api/summary", a)
	revalidated := call(t, "GET", h.Base+"/api/summary", map[string]string{"Origin": origin, "If-None-Match": a.header.Get("ETag")}, "")
	if revalidated.status != http.StatusNotModified {
		t.Fatalf("revalidation: %d", revalidated.status)
	}
	readable("304 /api/summary", revalidated)
	if cc := a.header.Get("Cache-Control"); !strings.Contains(cc, "stale-while-revalidate=300") || !strings.Contains(cc, "stale-if-error=86400") {
		t.Fatalf("/api/summary: Cache-Control %q, want stale-while-revalidate and stale-if-error", cc)
	}

	// /account: same origin only.
	acct := call(t, "POST", h.Base+"/account", fromPage, `{"email":"cors@example.com","password":"long enough password"}`)
	if acct.header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("/account allows other origins: %v", acct.header)
	}
	if p := preflight("/account/keys", "authorization"); p.header.Get("Access-Control-Allow-Origin") != "" || p.status == http.StatusNoContent {
		t.Fatalf("a preflight of /account/keys passed: %d %v", p.status, p.header)
	}
}

// TestLastModified: cacheable answers of both APIs carry Last-Modified,
// the data's newest reading (the same on every edge of a fleet), and
// If-Modified-Since revalidates them when If-None-Match is absent.
func TestLastModified(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	want := h.State.Load().Replica.Info().ReadingsMark.UTC().Format(http.TimeFormat)
	for _, path := range []string{"/api/v1/tags", "/api/v1/listings?limit=2", "/api/summary", "/api/extensions?page=2", "/api/v1/openapi.json"} {
		a := call(t, "GET", h.Base+path, nil, "")
		lm := a.header.Get("Last-Modified")
		if a.status != 200 || lm == "" || (path != "/api/v1/openapi.json" && lm != want) {
			t.Fatalf("%s: %d, Last-Modified %q, want %q", path, a.status, lm, want)
		}
		if again := call(t, "GET", h.Base+path, map[string]string{"If-Modified-Since": lm}, ""); again.status != http.StatusNotModified ||
			again.header.Get("Last-Modified") != lm || len(again.body) != 0 {
			t.Fatalf("%s with If-Modified-Since: %d, Last-Modified %q", path, again.status, again.header.Get("Last-Modified"))
		}
		if other := call(t, "GET", h.Base+path, map[string]string{"If-Modified-Since": lm, "If-None-Match": `W/"other"`}, ""); other.status != 200 {
			t.Fatalf("%s: If-Modified-Since won over a stale If-None-Match: %d", path, other.status)
		}
	}
}

// TestHomeAndDocs: / points people (HTML) and programs (JSON) to the
// reference, the description and the tool server; /docs is a page whose
// only script is the embedded Redoc, under a policy that loads nothing
// from another host; the script is cached for a year.
func TestHomeAndDocs(t *testing.T) {
	h := start(t, synthetic(t))
	page := call(t, "GET", h.Base+"/", map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}, "")
	if page.status != 200 || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") ||
		!strings.Contains(string(page.body), `href="/docs"`) || !strings.Contains(string(page.body), "/api/v1/openapi.json") ||
		!strings.Contains(string(page.body), "/mcp") || !strings.Contains(page.header.Get("Vary"), "Accept") {
		t.Fatalf("/ for a browser: %d %v %s", page.status, page.header, page.body)
	}
	var home struct{ Docs, OpenAPI, MCP string }
	j := call(t, "GET", h.Base+"/", nil, "")
	if j.status != 200 || json.Unmarshal(j.body, &home) != nil || home.Docs != "/docs" || home.OpenAPI != "/api/v1/openapi.json" || home.MCP != "/mcp" {
		t.Fatalf("/ for a program: %d %s", j.status, j.body)
	}
	docs := call(t, "GET", h.Base+"/docs", nil, "")
	csp := docs.header.Get("Content-Security-Policy")
	if docs.status != 200 || !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "default-src 'none'") ||
		strings.Contains(string(docs.body), "http://") || strings.Contains(string(docs.body), "https://") {
		t.Fatalf("/docs: %d, CSP %q: %s", docs.status, csp, docs.body)
	}
	src := regexp.MustCompile(`<script src="([^"]+)"`).FindStringSubmatch(string(docs.body))
	if src == nil {
		t.Fatalf("/docs has no script: %s", docs.body)
	}
	script := call(t, "GET", h.Base+src[1], nil, "")
	if script.status != 200 || !strings.HasPrefix(script.header.Get("Content-Type"), "text/javascript") ||
		script.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || len(script.body) < 500_000 {
		t.Fatalf("%s: %d %v, %d bytes", src[1], script.status, script.header, len(script.body))
	}
}
