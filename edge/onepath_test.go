package edge_test

import (
	"slices"
	"testing"

	"github.com/edge-stats/edge/mcp"
)

// notReads are the GET routes that are not reads of the published state,
// each with why: they are served by handlers of their own.
var notReads = map[string]string{
	"/healthz":                         "the process's liveness, no state",
	"/readyz":                          "the edge's readiness, answered before any state",
	"/metrics":                         "Prometheus's exposition, by its own library",
	"/mcp":                             "the tool server's transport; each tool call is a request of its v1 route",
	"/api/v1/openapi.json":             "a constant of the binary",
	"/api/v1/definitions":              "a constant of the binary",
	"/definitions":                     "a constant of the binary",
	"/robots.txt":                      "a constant of the binary",
	"/docs":                            "the API reference, a constant of the binary",
	"/docs/redoc.standalone-2.5.4.js":  "the reference's script, a constant of the binary",
	"/docs/redoc-init-1.js":            "the reference's script, a constant of the binary",
	"/api/v1/events/stream":            "a stream of server-sent events, pushed as states are published",
	"/api/v1/exports":                  "the manifest of files on disk, not the published state",
	"/api/v1/exports/:day/*":           "a file on disk, sent as stored",
	"/account/keys":                    "an account's own keys, read from ClickHouse with its credentials",
	"/account/webhooks":                "an account's own webhooks",
	"/account/webhooks/:id":            "an account's own webhook",
	"/account/webhooks/:id/deliveries": "an account's own deliveries",
}

// notYet are the read routes still served by handlers of their own, to
// be declared as reads (issue 75); the test fails when one of them is
// served as a read, so that the list only shrinks.
var notYet = []string{}

// TestEveryReadRouteIsOnTheOnePath lists the server's GET routes and
// fails on one that is neither served as a declared read (read.Serve
// through read.Env.Get) nor named above with why, and on a route of
// notYet that has become a read (take it off the list).
func TestEveryReadRouteIsOnTheOnePath(t *testing.T) {
	h := start(t, synthetic(t))
	reads := h.Server.ReadPaths()
	if len(reads) == 0 {
		t.Fatal("no route is served as a read")
	}
	seen := map[string]bool{}
	for _, r := range h.Server.App().GetRoutes(true) {
		if r.Method != "GET" || seen[r.Path] {
			continue
		}
		seen[r.Path] = true
		isRead := slices.Contains(reads, r.Path)
		_, other := notReads[r.Path]
		pending := slices.Contains(notYet, r.Path)
		switch {
		case isRead && (other || pending):
			t.Errorf("%s is served as a read: take it off notReads and notYet", r.Path)
		case !isRead && !other && !pending:
			t.Errorf("GET %s is not served as a declared read (read.Serve through read.Env.Get), nor named in notReads with why", r.Path)
		}
	}
	for _, p := range reads {
		if !seen[p] {
			t.Errorf("the read %s is recorded but not routed", p)
		}
	}
	// Every tool of the tool server is a request of its v1 route: a read,
	// or a route named above with why.
	for name, route := range mcp.ToolRoutes() {
		path := "/api/v1" + route
		if _, other := notReads[path]; !slices.Contains(reads, path) && !other {
			t.Errorf("the tool %s asks %s, which is neither a read nor named in notReads", name, path)
		}
	}
	t.Logf("%d GET routes: %d served as reads, %d not reads, %d not yet", len(seen), len(reads), len(notReads), len(notYet))
}
