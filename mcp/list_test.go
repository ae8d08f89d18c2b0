package mcp_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/mcp"
)

// maxToolsList is the bound on tools/list's body: an agent reads it into
// its context before the first call. Issue 42 set it at 40 KiB with
// sixteen tools: the output schemas carry no required lists since (see
// bare), which made room for the changelog's and the event feed's tools.
const maxToolsList = 40 << 10

// TestToolsListIsSmall lists the tools through the SDK as a client does
// and checks that the answer stays within maxToolsList and that each
// tool's output schema carries exactly the definitions it refers to,
// directly or through one another: none missing (every $ref resolves),
// none extra.
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
	// One type a schema: a nullable value is anyOf its type and null,
	// never a type array (docs/mcp.md, Output schemas).
	if n := strings.Count(string(body), `"type":[`); n > 0 {
		t.Errorf("tools/list has %d type arrays", n)
	}
	if !strings.Contains(string(body), `{"type":"null"}`) {
		t.Error("tools/list has no nullable value: the test no longer checks their form")
	}
	var res struct {
		Result struct {
			Tools []struct {
				Name         string
				OutputSchema map[string]json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(body, &res); err != nil || len(res.Result.Tools) != len(mcp.ToolNames()) {
		t.Fatalf("tools/list: %v, %d tools: %.300s", err, len(res.Result.Tools), body)
	}
	ref := regexp.MustCompile(`"\$ref":"#/\$defs/([^"]+)"`)
	for _, tool := range res.Result.Tools {
		var defs map[string]json.RawMessage
		if err := json.Unmarshal(tool.OutputSchema["$defs"], &defs); err != nil {
			t.Fatalf("%s: $defs: %v", tool.Name, err)
		}
		// What the schema refers to, followed through the definitions.
		used := map[string]bool{}
		var follow func(js []byte)
		follow = func(js []byte) {
			for _, m := range ref.FindAllSubmatch(js, -1) {
				name := string(m[1])
				if used[name] {
					continue
				}
				used[name] = true
				d, ok := defs[name]
				if !ok {
					t.Errorf("%s: $ref to %s, which its $defs lacks", tool.Name, name)
					continue
				}
				follow(d)
			}
		}
		for k, v := range tool.OutputSchema {
			if k != "$defs" {
				follow(v)
			}
		}
		for name := range defs {
			if !used[name] {
				t.Errorf("%s: $defs carries %s, which its schema never uses", tool.Name, name)
			}
		}
		if len(used) == 0 && tool.OutputSchema["anyOf"] == nil && tool.OutputSchema["properties"] == nil {
			t.Errorf("%s: an empty output schema", tool.Name)
		}
	}
	t.Logf("tools/list: %d bytes, %d tools", len(body), len(res.Result.Tools))
}
