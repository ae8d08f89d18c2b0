package edge_test

import (
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge"
)

// TestAllowNamesEveryMethodAnswered: on every route of the edge, a 405's
// Allow names exactly the methods the address answers with something
// else than 405: HEAD wherever GET is, and OPTIONS where the CORS
// preflight is answered (under /api and at /mcp). A client that trusts
// Allow (or a proxy that validates against it) is told all it may send.
func TestAllowNamesEveryMethodAnswered(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) { c.NoLimits = true; c.PageRate = 0 })
	param := regexp.MustCompile(`:[a-zA-Z]+\??|\*`)
	seen := map[string]bool{}
	// A preflight as a browser sends it: an OPTIONS is answered where one
	// is.
	preflight := map[string]string{"Origin": "https://dashboard.example", "Access-Control-Request-Method": "GET"}
	for _, r := range h.Server.App().GetRoutes(true) {
		path := param.ReplaceAllString(r.Path, "x")
		if seen[path] || strings.HasPrefix(path, "/docs/") {
			continue
		}
		seen[path] = true
		refused := call(t, "PATCH", h.Base+path, nil, "")
		if refused.status != http.StatusMethodNotAllowed {
			t.Errorf("PATCH %s: %d, want 405", path, refused.status)
			continue
		}
		allow := strings.Split(refused.header.Get("Allow"), ", ")
		for _, m := range []string{"GET", "HEAD", "POST", "DELETE", "OPTIONS"} {
			var hdr map[string]string
			if m == "OPTIONS" {
				hdr = preflight
			}
			answered := call(t, m, h.Base+path, hdr, "").status != http.StatusMethodNotAllowed
			if listed := slices.Contains(allow, m); answered != listed {
				t.Errorf("%s %s answered %v, but Allow is %q", m, path, answered, refused.header.Get("Allow"))
			}
		}
	}
	if len(seen) < 40 {
		t.Fatalf("only %d routes walked", len(seen))
	}
}
