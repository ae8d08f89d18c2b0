package mcp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/mcp"
	"github.com/edge-stats/edge/mcp/mcptest"
)

// offline is a tool server whose reads answer at once, in this process,
// and which counts the calls its SDK handlers charge.
type offline struct {
	srv     *mcp.Server
	charged atomic.Int64
}

func newOffline(t testing.TB) *offline {
	t.Helper()
	spec, err := v1.OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	o := &offline{}
	answer := func(_ context.Context, path string, _ url.Values) (int, []byte, bool) {
		if strings.HasPrefix(path, "/listings/") && strings.HasSuffix(path, "/missing") {
			return 404, []byte(`{"type":"about:blank","title":"Not Found","status":404,"detail":"No such listing."}`), true
		}
		return 200, []byte(`{"tags":[{"slug":"a","name":"A"}],"path":"` + path + `"}`), true
	}
	charge := func(context.Context) error { o.charged.Add(1); return nil }
	o.srv, err = mcp.New(v1.Version, spec, answer, charge, func() uint64 { return 1 }, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// viaSDK answers body through the SDK as /mcp would after the gate's
// screen; refused is the screen's answer.
func (o *offline) viaSDK(body []byte, version string) (status int, resp []byte, refused bool) {
	if r := mcp.Screen(body, version); r != nil {
		return http.StatusBadRequest, r, true
	}
	req := httptest.NewRequest("POST", "/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	rec := httptest.NewRecorder()
	o.srv.ServeHTTP(rec, req)
	return rec.Code, rec.Body.Bytes(), false
}

// executed returns how many tool calls a /mcp response reports as run:
// JSON-RPC results that carry a tool's content (results and tool errors
// alike; a call refused before its tool ran is a JSON-RPC error).
func executed(resp []byte) int {
	var one struct {
		Result *struct {
			Content json.RawMessage `json:"content"`
		} `json:"result"`
	}
	resp = bytes.TrimSpace(resp)
	if len(resp) > 0 && resp[0] == '[' {
		var batch []json.RawMessage
		if json.Unmarshal(resp, &batch) != nil {
			return 0
		}
		n := 0
		for _, m := range batch {
			n += executed(m)
		}
		return n
	}
	if json.Unmarshal(resp, &one) == nil && one.Result != nil && len(one.Result.Content) > 0 {
		return 1
	}
	return 0
}

// checkCounted asserts the rule of /mcp: the tool calls a body runs are
// the calls it is charged for, and a call the fast path takes is answered
// as the SDK answers it.
func checkCounted(t *testing.T, o *offline, body []byte, version string) {
	t.Helper()
	before := o.charged.Load()
	status, resp, refused := o.viaSDK(body, version)
	charged := int(o.charged.Load() - before)
	if refused {
		if charged != 0 {
			t.Fatalf("a refused body was charged %d calls", charged)
		}
		var e struct {
			Error struct{ Code int } `json:"error"`
		}
		if json.Unmarshal(resp, &e) != nil || e.Error.Code == 0 {
			t.Fatalf("a refusal that is not a JSON-RPC error: %s", resp)
		}
		return
	}
	if ran := executed(resp); ran != charged {
		t.Fatalf("%q (version %q): %d tool calls ran, %d charged; the SDK answered %d %s", body, version, ran, charged, status, resp)
	}
	header := func(k string) string {
		if http.CanonicalHeaderKey(k) == "Mcp-Protocol-Version" {
			return version
		}
		return ""
	}
	call, _ := o.srv.ParseCall(body, header)
	if call == nil {
		return
	}
	if charged != 1 {
		t.Fatalf("%q: the fast path takes it as one call, the SDK ran %d", body, charged)
	}
	fast := o.srv.FastCall(context.Background(), call)
	var a, b any
	if json.Unmarshal(fast, &a) != nil || json.Unmarshal(resp, &b) != nil || !reflect.DeepEqual(a, b) {
		t.Fatalf("%q:\nfast %s\nsdk  %s", body, fast, resp)
	}
}

// TestToolCallsCountedOnce: over seeded and generated bodies, the tool
// calls that run are exactly the calls charged, and the fast path answers
// as the SDK does.
func TestToolCallsCountedOnce(t *testing.T) {
	o := newOffline(t)
	for _, s := range mcptest.Seeds {
		checkCounted(t, o, []byte(s.Body), s.Version)
	}
	for i, body := range mcptest.Bodies(400) {
		version := []string{"", "2025-03-26", "2025-06-18", "2025-11-25"}[i%4]
		checkCounted(t, o, body, version)
	}
	// A batch of calls is charged per call where batches exist.
	var calls []string
	for i := range 10 {
		calls = append(calls, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i)+`,"method":"tools/call","params":{"name":"list_tags"}}`)
	}
	batch := "[" + strings.Join(calls, ",") + "]"
	before := o.charged.Load()
	if _, _, refused := o.viaSDK([]byte(batch), "2025-03-26"); refused || o.charged.Load()-before != 10 {
		t.Fatalf("a batch of 10 calls: refused %v, charged %d", refused, o.charged.Load()-before)
	}
	// Two requests of one id would both run while their answers collapse
	// into one: such a batch is refused before anything runs. 1 and 1.0
	// are one id, as the SDK reads numbers.
	call := func(id string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"list_tags"}}`
	}
	for _, ids := range [][2]string{{"1", "1"}, {"1", "1.0"}, {`"a"`, `"a"`}} {
		dup := "[" + call(ids[0]) + "," + call(ids[1]) + "]"
		before := o.charged.Load()
		if r := mcp.Screen([]byte(dup), ""); r == nil || !strings.Contains(string(r), "share the id") {
			t.Errorf("batch with ids %s and %s: screened %s, want refused", ids[0], ids[1], r)
		}
		if _, _, refused := o.viaSDK([]byte(dup), ""); !refused || o.charged.Load() != before {
			t.Errorf("batch with ids %s and %s: refused %v, charged %d", ids[0], ids[1], refused, o.charged.Load()-before)
		}
		checkCounted(t, o, []byte(dup), "2025-03-26")
	}
	// Distinct ids, and notifications (no id), pass.
	ok := "[" + call("1") + "," + call(`"1"`) + `,{"jsonrpc":"2.0","method":"notifications/initialized"},{"jsonrpc":"2.0","method":"notifications/initialized"}]`
	if r := mcp.Screen([]byte(ok), ""); r != nil {
		t.Errorf("batch with ids 1 and \"1\" and two notifications: refused %s", r)
	}
}

// FuzzToolCallsCountedOnce is TestToolCallsCountedOnce's property over
// any body and protocol version.
func FuzzToolCallsCountedOnce(f *testing.F) {
	for _, s := range mcptest.Seeds {
		f.Add([]byte(s.Body), s.Version)
	}
	o := newOffline(f)
	f.Fuzz(func(t *testing.T, body []byte, version string) {
		if len(body) > 64<<10 {
			return
		}
		checkCounted(t, o, body, version)
	})
}
