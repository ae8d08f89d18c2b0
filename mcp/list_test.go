package mcp_test

import (
	"encoding/json"
	"fmt"
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
// its context before the first call (docs/mcp.md says what it holds).
const maxToolsList = 16 << 10

// TestToolsListIsSmall lists the tools through the SDK as a client does
// and checks that the answer stays within maxToolsList, that every tool
// keeps its description and input schema, and that each output schema
// names exactly the top-level fields of a schema of the OpenAPI
// description.
func TestToolsListIsSmall(t *testing.T) {
	spec, err := v1.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.New(v1.Version, spec, nil, nil, func() uint64 { return 1 }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	rec := httptest.NewRecorder()
	srv.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Result().Body)
	if rec.Code != http.StatusOK {
		t.Fatalf("tools/list: %d %s", rec.Code, body)
	}
	// The 2026-07-28 caching hints: the list is the same for every caller
	// and stays true until a deploy.
	if !strings.Contains(string(body), `"ttlMs":3600000`) || !strings.Contains(string(body), `"cacheScope":"public"`) {
		t.Errorf("tools/list without its caching hints: %.200s", body)
	}
	if len(body) > maxToolsList {
		t.Errorf("tools/list is %d bytes, over its bound of %d", len(body), maxToolsList)
	}
	var res struct {
		Result struct {
			Tools []struct {
				Name         string
				Description  string
				InputSchema  map[string]any
				OutputSchema map[string]any
			}
		}
	}
	if err := json.Unmarshal(body, &res); err != nil || len(res.Result.Tools) != len(mcp.ToolNames()) {
		t.Fatalf("tools/list: %v, %d tools: %.300s", err, len(res.Result.Tools), body)
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any
			}
		}
	}
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	for _, tool := range res.Result.Tools {
		if len(tool.Description) < 40 || tool.InputSchema["type"] != "object" || tool.InputSchema["properties"] == nil {
			t.Errorf("%s: its description or input schema is missing", tool.Name)
		}
		// The answer's schema, or either of two.
		shapes := []map[string]any{tool.OutputSchema}
		if anyOf, ok := tool.OutputSchema["anyOf"].([]any); ok {
			shapes = nil
			for _, s := range anyOf {
				shapes = append(shapes, s.(map[string]any))
			}
		}
		if tool.OutputSchema["type"] != "object" || strings.Contains(fmt.Sprint(tool.OutputSchema), "$ref") {
			t.Errorf("%s: output schema %v, want an object with no references", tool.Name, tool.OutputSchema)
		}
		for _, shape := range shapes {
			props, _ := shape["properties"].(map[string]any)
			if len(props) == 0 {
				t.Errorf("%s: an output schema without fields: %v", tool.Name, shape)
				continue
			}
			// Some schema of the description has exactly these fields.
			names := slices.Sorted(maps.Keys(props))
			found := false
			for _, s := range doc.Components.Schemas {
				if slices.Equal(names, slices.Sorted(maps.Keys(s.Properties))) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: fields %v are no schema's of the OpenAPI description", tool.Name, names)
			}
		}
	}
	t.Logf("tools/list: %d bytes, %d tools", len(body), len(res.Result.Tools))
}
