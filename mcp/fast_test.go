package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/mcp"
)

// TestFastCallAnswersAsTheSDK runs the tool server in this process and
// answers each tools/call twice: by the server's own fast path (ParseCall
// and FastCall) and by the MCP SDK (ServeHTTP). Both must give the same
// response, in both protocol eras, for results and for tool errors, and
// the fast path must leave to the SDK what it does not answer. An SDK
// upgrade that changes a response fails here. The reads behind the tools
// are the v1 API of an edge over the test dataset in memory.
func TestFastCallAnswersAsTheSDK(t *testing.T) {
	h := edgetest.Start(t, edgetest.Memory(edgetest.Seed(300)), nil, func(c *edge.Config) { c.NoLimits = true })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	answer := func(ctx context.Context, path string, query url.Values) (int, []byte, bool) {
		u := h.Base + "/api/v1" + path
		if len(query) > 0 {
			u += "?" + query.Encode()
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Error(err)
			return 500, nil, false
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body, !strings.Contains(resp.Header.Get("Cache-Control"), "no-store")
	}
	spec, err := v1.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcp.New(v1.Version, spec, answer, nil, func() uint64 { return 1 }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	modern := func(name string) map[string]string {
		return map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": name}
	}
	cases := []struct {
		name   string
		hdr    map[string]string
		body   string
		isFast bool
	}{
		{"legacy result", map[string]string{"Mcp-Protocol-Version": "2025-11-25"},
			`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"store_stats","arguments":{"store":"chrome"}}}`, true},
		{"legacy, no version header, string id", nil,
			`{"jsonrpc":"2.0","id":"a-1","method":"tools/call","params":{"name":"list_tags"}}`, true},
		{"legacy list with arguments", map[string]string{"Mcp-Protocol-Version": "2025-06-18"},
			`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"search_listings","arguments":{"store":"firefox","limit":3}}}`, true},
		{"legacy tool error", map[string]string{"Mcp-Protocol-Version": "2025-06-18"},
			`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"search_listings","arguments":{"limit":0,"q":"a\"b"}}}`, true},
		{"modern result", modern("top_charts"),
			`{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"top_charts","arguments":{"store":"edge"},` + modernMeta + `}}`, true},
		{"modern tool error", modern("get_listing"),
			`{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"get_listing","arguments":{"store":"safari","id":"x"},` + modernMeta + `}}`, true},
		{"modern without capabilities: the SDK judges", modern("list_tags"),
			`{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"list_tags","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`, false},
		{"unknown tool: the SDK judges", nil,
			`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"nope"}}`, false},
		{"arguments not an object: the SDK judges", nil,
			`{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"list_tags","arguments":[1]}}`, false},
	}
	for _, c := range cases {
		header := func(k string) string { return c.hdr[http.CanonicalHeaderKey(k)] }
		call, _ := srv.ParseCall([]byte(c.body), header)
		if (call != nil) != c.isFast {
			t.Errorf("%s: fast path taken %v, want %v", c.name, call != nil, c.isFast)
		}
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(c.body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range c.hdr {
			req.Header.Set(k, v)
		}
		rec := httptest.NewRecorder()
		srv.ServeHTTP(rec, req)
		var viaSDK any
		if err := json.Unmarshal(rec.Body.Bytes(), &viaSDK); err != nil {
			t.Fatalf("%s: the SDK answered %d %s", c.name, rec.Code, rec.Body.Bytes())
		}
		if call == nil {
			continue
		}
		if rec.Code != 200 {
			t.Errorf("%s: the SDK answered %d to a call the fast path takes", c.name, rec.Code)
		}
		var viaFast any
		fast := srv.FastCall(context.Background(), call)
		if err := json.Unmarshal(fast, &viaFast); err != nil || !reflect.DeepEqual(viaFast, viaSDK) {
			t.Errorf("%s:\nfast %s\nsdk  %s", c.name, fast, rec.Body.Bytes())
		}
	}
}
