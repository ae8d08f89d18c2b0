package mcp

import (
	"bytes"
	"strconv"

	segjson "github.com/segmentio/encoding/json"

	"github.com/edge-stats/edge/internal/jsonw"
)

// What runs and what is counted are decided by one parse. A request body
// first passes Screen, which refuses what two JSON decoders could read in
// two ways: more than one JSON value (trailing bytes), deep nesting,
// batches where the protocol has none, and batches with two requests of
// one id. A body that passes is either a
// plain tools/call that FastCall answers (and the gate counts once) or
// goes to the SDK, whose tool handlers charge each call they run (see
// New): the count is taken where the tool runs, from the SDK's own parse.

// maxDepth is the deepest nesting of arrays and objects a body may have.
// Tool arguments are flat; JSON-RPC envelopes add three levels.
const maxDepth = 32

// MaxBatch is the most messages a JSON-RPC batch may hold (protocol
// 2025-03-26 and earlier). Each tools/call in it counts against the day.
const MaxBatch = 32

// CodeLimited is the JSON-RPC error code of a tool call refused by the
// caller's limits (a server error, in the range JSON-RPC reserves for
// them).
const CodeLimited = -32029

// batchVersion reports whether protocol version v (as the
// Mcp-Protocol-Version header gives it) still has JSON-RPC batches: they
// were removed in 2025-06-18. No header means 2025-03-26, as the SDK
// reads it.
func batchVersion(v string) bool {
	return v == "" || v == "2025-03-26" || v == "2024-11-05"
}

// Screen checks a request body to /mcp before anything parses it for
// meaning, for a request of protocol version (the Mcp-Protocol-Version
// header, "" when absent). It returns nil when the body may be run, or
// the JSON-RPC error response to send with status 400.
func Screen(body []byte, version string) []byte {
	if depth(body) > maxDepth {
		return rpcError(codeInvalidRequest, "The request nests arrays and objects deeper than 32 levels; send a flat JSON-RPC message.")
	}
	if !segjson.Valid(body) {
		return rpcError(codeParseError, "The body is not one JSON value: send a single JSON-RPC message, with nothing after it.")
	}
	body = bytes.TrimLeft(body, " \t\r\n")
	if len(body) == 0 || body[0] != '[' {
		return nil
	}
	if !batchVersion(version) {
		return rpcError(codeInvalidRequest, "JSON-RPC batches were removed in protocol 2025-06-18 (this request says "+quoteVersion(version)+"); send one message per POST.")
	}
	var batch []segjson.RawMessage
	if segjson.Unmarshal(body, &batch) != nil {
		return rpcError(codeParseError, "The batch is not a JSON array of messages.")
	}
	if len(batch) > MaxBatch {
		return rpcError(codeInvalidRequest, "A batch holds at most 32 messages; split it into several POSTs.")
	}
	// Answers are matched to requests by id: two requests of one id would
	// both run (and count) while their answers collapse into one.
	seen := make(map[string]bool, len(batch))
	for _, m := range batch {
		var msg struct {
			ID     segjson.RawMessage `json:"id"`
			Method *string            `json:"method"`
		}
		if segjson.Unmarshal(m, &msg) != nil || msg.Method == nil {
			continue
		}
		id := idKey(msg.ID)
		if id == "" {
			continue // a notification
		}
		if seen[id] {
			return rpcError(codeInvalidRequest, "Two requests in the batch share the id "+quoteVersion(string(bytes.TrimSpace(msg.ID)))+"; give each request its own id.")
		}
		seen[id] = true
	}
	return nil
}

// idKey returns a request id as the SDK compares it: a string by its
// value, a number by its float64 value (1 and 1.0 are one id); "" for no
// id or null.
func idKey(raw segjson.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if segjson.Unmarshal(raw, &s) == nil {
			return "s" + s
		}
		return "r" + string(raw)
	}
	if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
		return "n" + strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "r" + string(raw)
}

// JSON-RPC's codes for a body that is not JSON and for one that is not a
// request.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

func quoteVersion(v string) string {
	if len(v) > 32 {
		v = v[:32]
	}
	return string(jsonw.Plain(nil, v))
}

// rpcError is a JSON-RPC error response with a null id.
func rpcError(code int, message string) []byte {
	return rpcErrorID([]byte("null"), code, message, 0, 0)
}

// rpcErrorID is a JSON-RPC error response to the request of id (raw
// JSON), with the HTTP status and Retry-After seconds that refused it as
// its data when not 0.
func rpcErrorID(id []byte, code int, message string, status, retryAfter int) []byte {
	out := []byte(`{"jsonrpc":"2.0","id":`)
	out = append(out, id...)
	out = append(out, `,"error":{"code":`...)
	out = strconv.AppendInt(out, int64(code), 10)
	out = append(out, `,"message":`...)
	out = jsonw.Plain(out, message)
	if status != 0 {
		out = append(out, `,"data":{"status":`...)
		out = strconv.AppendInt(out, int64(status), 10)
		if retryAfter > 0 {
			out = append(out, `,"retryAfter":`...)
			out = strconv.AppendInt(out, int64(retryAfter), 10)
		}
		out = append(out, '}')
	}
	return append(out, "}}\n"...)
}

// JSON-RPC codes of a request the HTTP layer refused before it ran (in
// the range JSON-RPC reserves for servers): see Refusal.
const (
	// CodeUnauthorized: the key is missing where one is needed, wrong,
	// revoked, or refused unread (HTTP 401).
	CodeUnauthorized = -32001
	// CodeUnavailable: the edge cannot decide the call for a moment
	// (HTTP 503: the day's usage or the key list cannot be read).
	CodeUnavailable = -32003
	// CodeRefused: any other refusal (HTTP 4xx).
	CodeRefused = -32000
)

// Refusal returns the JSON-RPC error response to body (a request to /mcp)
// refused by the HTTP layer with status and the detail message: the
// request's own id when body is one request with an id, else null (a
// batch, or a body that could not be read); the code follows the status
// (CodeLimited for 429); the status and Retry-After go in its data too.
// A JSON-RPC client then reads why, where an empty or problem+json body
// left it with "unexpected end of JSON input".
func Refusal(body []byte, status int, message string, retryAfter int) []byte {
	id := []byte("null")
	var msg struct {
		ID segjson.RawMessage `json:"id"`
	}
	if b := bytes.TrimSpace(body); len(b) > 0 && b[0] == '{' && segjson.Unmarshal(b, &msg) == nil && idKey(msg.ID) != "" {
		id = bytes.TrimSpace(msg.ID)
	}
	code := CodeRefused
	switch status {
	case 429:
		code = CodeLimited
	case 401, 403:
		code = CodeUnauthorized
	case 503:
		code = CodeUnavailable
	}
	return rpcErrorID(id, code, message, status, retryAfter)
}

// OnlyNotifications reports whether body (screened) holds notifications
// only: one JSON-RPC message without an id, or a batch of them. Nothing
// runs for them on a stateless server (they are answered 202), so they
// are not counted against a caller's limits.
func OnlyNotifications(body []byte) bool {
	b := bytes.TrimSpace(body)
	var msgs []segjson.RawMessage
	switch {
	case len(b) > 0 && b[0] == '{':
		msgs = []segjson.RawMessage{b}
	case len(b) > 0 && b[0] == '[':
		if segjson.Unmarshal(b, &msgs) != nil {
			return false
		}
	}
	if len(msgs) == 0 {
		return false
	}
	for _, m := range msgs {
		var msg struct {
			ID     *segjson.RawMessage `json:"id"`
			Method *string             `json:"method"`
		}
		if segjson.Unmarshal(m, &msg) != nil || msg.ID != nil || msg.Method == nil {
			return false
		}
	}
	return true
}

// depth returns how deeply body nests arrays and objects (outside
// strings), stopping as soon as it passes maxDepth.
func depth(body []byte) int {
	d, deepest := 0, 0
	inString, escaped := false, false
	for _, c := range body {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			d++
			if d > deepest {
				deepest = d
				if deepest > maxDepth {
					return deepest
				}
			}
		case '}', ']':
			if d > 0 {
				d--
			}
		}
	}
	return deepest
}
