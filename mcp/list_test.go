package mcp_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/mcp"
)

// maxToolsList is the bound on tools/list's body: an agent reads it into
// its context before the first call. 12 KiB leaves room under the bound
// for the next issues' tools, a verdict tool and an inventory tool,
// written as these are (docs/mcp.md says how much).
const maxToolsList = 12 << 10

// TestToolsListIsSmall lists the tools as a client of each protocol era
// does (2026-07-28 adds the server's info to the result) and checks that
// each answer stays within maxToolsList, that every tool keeps its
// description and input schema, and that each output schema is an object
// whose title names an object schema of the OpenAPI description (or
// either of two, as anyOf): the edge's client tests check that each
// tool's result has exactly that schema's fields.
func TestToolsListIsSmall(t *testing.T) {
	spec, err := v1.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.New(v1.Version, spec, nil, nil, func() uint64 { return 1 }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Type       string
				Properties map[string]any
			}
		}
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	for _, era := range []struct{ protocol, params string }{
		{"2025-06-18", `{}`},
		{"2026-07-28", `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}`},
	} {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":`+era.params+`}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", era.protocol)
		req.Header.Set("Mcp-Method", "tools/list")
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		body, _ := io.ReadAll(rec.Result().Body)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s tools/list: %d %s", era.protocol, rec.Code, body)
		}
		// The 2026-07-28 caching hints: the list is the same for every
		// caller and stays true until a deploy.
		if !strings.Contains(string(body), `"ttlMs":3600000`) || !strings.Contains(string(body), `"cacheScope":"public"`) {
			t.Errorf("%s tools/list without its caching hints: %.200s", era.protocol, body)
		}
		if len(body) > maxToolsList {
			t.Errorf("%s tools/list is %d bytes, over its bound of %d", era.protocol, len(body), maxToolsList)
		}
		var res struct {
			Result struct {
				Tools []struct {
					Name         string
					Title        string
					Description  string
					InputSchema  map[string]any
					OutputSchema map[string]any
				}
			}
		}
		if err := json.Unmarshal(body, &res); err != nil || len(res.Result.Tools) != len(mcp.ToolNames()) {
			t.Fatalf("%s tools/list: %v, %d tools: %.300s", era.protocol, err, len(res.Result.Tools), body)
		}
		for _, tool := range res.Result.Tools {
			if len(tool.Description) < 40 || tool.InputSchema["type"] != "object" || tool.InputSchema["properties"] == nil {
				t.Errorf("%s: its description or input schema is missing", tool.Name)
			}
			if tool.Title != "" {
				t.Errorf("%s: a title, %q, beside its name", tool.Name, tool.Title)
			}
			// The answer's schema by name, or either of two; nothing else.
			out := tool.OutputSchema
			titles := []any{out["title"]}
			keys := []string{"title", "type"}
			if anyOf, ok := out["anyOf"].([]any); ok {
				titles, keys = nil, []string{"anyOf", "type"}
				for _, s := range anyOf {
					s, _ := s.(map[string]any)
					if len(s) != 1 {
						t.Errorf("%s: %v in anyOf, want only a title", tool.Name, s)
					}
					titles = append(titles, s["title"])
				}
			}
			if out["type"] != "object" || !slices.Equal(slices.Sorted(maps.Keys(out)), keys) || len(titles) == 0 {
				t.Errorf("%s: output schema %v, want an object and the title of its schema", tool.Name, out)
			}
			for _, title := range titles {
				name, _ := title.(string)
				if s, ok := doc.Components.Schemas[name]; !ok || s.Type != "object" || len(s.Properties) == 0 {
					t.Errorf("%s: output schema title %v is no object schema of the OpenAPI description", tool.Name, title)
				}
			}
		}
		t.Logf("%s tools/list: %d bytes, %d tools", era.protocol, len(body), len(res.Result.Tools))
	}
}
