package edge_test

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/mcp/mcptest"
)

// toolResults returns how many tool calls a /mcp response reports as
// run: JSON-RPC results carrying a tool's content.
func toolResults(body []byte) int {
	var batch []json.RawMessage
	if json.Unmarshal(body, &batch) != nil {
		batch = []json.RawMessage{body}
	}
	n := 0
	for _, m := range batch {
		var one struct {
			Result *struct {
				Content json.RawMessage `json:"content"`
			} `json:"result"`
		}
		if json.Unmarshal(m, &one) == nil && one.Result != nil && len(one.Result.Content) > 0 {
			n++
		}
	}
	return n
}

// TestToolCallsCountOnceOverHTTP is the attack on the day's count: bodies
// that decoders read in different ways (batches, trailing bytes, keys in
// other cases, duplicate keys, huge ids, deep arguments) are posted to
// /mcp, and the calls the day counted (read from RateLimit-Remaining)
// must equal the tool results the responses carry. Batches are refused
// with a JSON-RPC error for protocols without them, counted per call for
// 2025-03-26.
func TestToolCallsCountOnceOverHTTP(t *testing.T) {
	const day = 1 << 20
	h := start(t, synthetic(t), withLimits(limits.Policy{PerMinute: 1 << 20, PerDay: day}, limits.Policy{PerMinute: 1 << 20, PerDay: day}))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	const list = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	// remaining reads the day's remainder; tools/list counts against the
	// minute only. While a usage sync runs, a call may see a batch of
	// calls twice for a moment (limits.Usage.Sync: that can only refuse,
	// never admit too many), so one read can be one low: the highest of
	// three reads is the count.
	remaining := func() int {
		best := -1
		for range 3 {
			a := rpc(t, h, nil, list)
			n, err := strconv.Atoi(a.header.Get("RateLimit-Remaining"))
			if a.status != 200 || err != nil {
				t.Fatalf("tools/list: %d %q", a.status, a.header.Get("RateLimit-Remaining"))
			}
			best = max(best, n)
		}
		return best
	}
	bodies := mcptest.Seeds
	for i, b := range mcptest.Bodies(300) {
		bodies = append(bodies, mcptest.Body{Body: string(b), Version: []string{"", "2025-03-26", "2025-06-18", "2025-11-25"}[i%4]})
	}
	totalRan := 0
	for _, b := range bodies {
		hdr := map[string]string{}
		if b.Version != "" {
			hdr["Mcp-Protocol-Version"] = b.Version
		}
		before := remaining()
		a := rpc(t, h, hdr, b.Body)
		counted := before - remaining()
		ran := toolResults(a.body)
		totalRan += ran
		if counted != ran {
			t.Errorf("%.200q (version %q): %d tool calls ran, the day counted %d; answer %d %.300s", b.Body, b.Version, ran, counted, a.status, a.body)
		}
		trimmed := strings.TrimLeft(b.Body, " \t\r\n")
		if strings.HasPrefix(trimmed, "[") && b.Version >= "2025-06-18" {
			var e struct {
				Error struct{ Code int } `json:"error"`
			}
			if a.status != http.StatusBadRequest || json.Unmarshal(a.body, &e) != nil || e.Error.Code >= 0 {
				t.Errorf("a batch in %s: %d %.200s, want 400 with a JSON-RPC error", b.Version, a.status, a.body)
			}
		}
	}
	if totalRan < 50 {
		t.Fatalf("only %d tool calls ran over %d bodies: the bodies test little", totalRan, len(bodies))
	}
	// A batch of 2025-03-26 counts each call.
	var calls []string
	for i := range 20 {
		calls = append(calls, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"tools/call","params":{"name":"list_tags"}}`)
	}
	before := remaining()
	a := rpc(t, h, map[string]string{"Mcp-Protocol-Version": "2025-03-26"}, "["+strings.Join(calls, ",")+"]")
	if got := before - remaining(); a.status != 200 || got != 20 || toolResults(a.body) != 20 {
		t.Fatalf("a batch of 20 calls: %d, counted %d, ran %d", a.status, got, toolResults(a.body))
	}
}
