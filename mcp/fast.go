package mcp

import (
	"bytes"
	"context"
	"errors"
	"hash/maphash"
	"sync/atomic"

	"github.com/segmentio/encoding/json"

	"github.com/edge-stats/edge/internal/jsonw"
)

// The SDK serves every request with a session of its own, built from the
// request and torn down after it, and decodes the body five times: a
// tools/call costs there, in time and garbage, a hundred times the REST
// answer it returns (bench/README.md, A tools/call against its REST
// answer). FastCall answers the one request
// that matters for throughput, a plain tools/call, itself, with exactly
// the result the SDK gives (tests compare both, for each protocol era);
// everything else goes to the SDK.

// legacyVersion reports whether an Mcp-Protocol-Version header names a
// 2025 protocol (or is absent, as before 2025-06-18).
func legacyVersion(v string) bool {
	switch v {
	case "", "2025-03-26", "2025-06-18", "2025-11-25":
		return true
	}
	return false
}

const modernVersion = "2026-07-28"

// callRequest is a tools/call as ParseCall reads it.
type callRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  *struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
		Meta      *requestMeta    `json:"_meta"`
	} `json:"params"`
}

// requestMeta is the _meta of a request of protocol 2026-07-28 (the members
// ParseCall looks at).
type requestMeta struct {
	ProtocolVersion json.RawMessage `json:"io.modelcontextprotocol/protocolVersion"`
	ClientInfo      json.RawMessage `json:"io.modelcontextprotocol/clientInfo"`
	Capabilities    json.RawMessage `json:"io.modelcontextprotocol/clientCapabilities"`
}

// Call is a plain tools/call of one of the tools, as FastCall answers it.
type Call struct {
	id     json.RawMessage
	tool   *tool
	args   json.RawMessage
	modern bool // protocol 2026-07-28
}

// ParseCall reads body, a JSON-RPC message to /mcp, and returns it when it
// is a plain tools/call of one of the tools that FastCall answers; header
// reads the request's headers. Anything else is false, for the SDK. It
// decodes as the SDK does (segmentio/encoding/json, keys matched with
// their case); body has passed Screen.
func (s *Server) ParseCall(body []byte, header func(string) string) (*Call, bool) {
	body = bytes.TrimSpace(body)
	if len(body) == 0 || body[0] != '{' {
		return nil, false
	}
	var req callRequest
	if decode(body, &req) != nil || req.JSONRPC != "2.0" || req.Method != "tools/call" || req.Params == nil || !validID(req.ID) {
		return nil, false
	}
	t := s.byName[req.Params.Name]
	if t == nil {
		return nil, false
	}
	if a := bytes.TrimSpace(req.Params.Arguments); len(a) > 0 && a[0] != '{' && string(a) != "null" {
		return nil, false
	}
	modern, ok := era(req.Params.Meta, header, req.Params.Name)
	if !ok {
		return nil, false
	}
	return &Call{id: req.ID, tool: t, args: req.Params.Arguments, modern: modern}, true
}

// FastCall answers a call with the JSON-RPC response the SDK would give.
// The result of a call that succeeds is kept for the view generation it
// was read in, so the same call again (the same tool, the same argument
// bytes) costs no read at all.
func (s *Server) FastCall(ctx context.Context, call *Call) []byte {
	gen := s.generation()
	slot := &s.results.entries[s.results.hash(call.tool.name, call.args)%uint64(len(s.results.entries))]
	var tail []byte
	if e := slot.Load(); e != nil && e.gen == gen && e.tool == call.tool.name && bytes.Equal(e.args, call.args) {
		tail = e.tail
	} else {
		result, detail, cacheable := call.tool.call(ctx, s.answer, call.args)
		tail = make([]byte, 0, 2*len(result)+64)
		tail = append(tail, `"content":[{"type":"text","text":`...)
		if result == nil {
			tail = jsonw.Plain(tail, detail)
			tail = append(tail, `}],"isError":true}}`...)
		} else {
			tail = s.escaped.append(tail, result)
			tail = append(tail, `}],"structuredContent":`...)
			tail = append(tail, result...)
			tail = append(tail, `}}`...)
			if cacheable && len(tail) <= resultCacheMax && s.generation() == gen {
				slot.Store(&resultEntry{gen: gen, tool: call.tool.name, args: bytes.Clone(call.args), tail: tail})
			}
		}
	}
	out := make([]byte, 0, len(tail)+len(call.id)+len(s.serverInfo)+96)
	out = append(out, `{"jsonrpc":"2.0","id":`...)
	out = append(out, call.id...)
	out = append(out, `,"result":{`...)
	if call.modern {
		out = append(out, `"_meta":{"io.modelcontextprotocol/serverInfo":`...)
		out = append(out, s.serverInfo...)
		out = append(out, `},"resultType":"complete",`...)
	}
	out = append(out, tail...)
	return append(out, '\n')
}

// resultCache keeps recent successful results, direct-mapped by tool and
// arguments; an entry is used only for its own view generation, tool and
// argument bytes. Answers cut short by a search budget are not kept.
type resultCache struct {
	seed    maphash.Seed
	entries [512]atomic.Pointer[resultEntry]
}

type resultEntry struct {
	gen  uint64
	tool string
	args []byte
	tail []byte // the result's members from "content" to its end
}

// resultCacheMax bounds a kept result (512 of them: 32 MiB at worst).
const resultCacheMax = 64 << 10

func (c *resultCache) hash(tool string, args []byte) uint64 {
	var h maphash.Hash
	h.SetSeed(c.seed)
	h.WriteString(tool)
	h.Write(args)
	return h.Sum64()
}

// escapeCache keeps the JSON-string form of recent answers: the same
// cached answer is escaped once, not on every call. It is direct-mapped
// by a hash of the answer, and an entry is used only when its answer is
// byte for byte the one asked for.
type escapeCache struct {
	seed    maphash.Seed
	entries [256]atomic.Pointer[escaped]
}

type escaped struct{ raw, text []byte }

// escapeCacheMax is the largest answer kept escaped (256 entries of at
// most twice this: 16 MiB at worst).
const escapeCacheMax = 32 << 10

func (c *escapeCache) append(dst, raw []byte) []byte {
	if len(raw) > escapeCacheMax {
		return jsonw.Plain(dst, string(raw))
	}
	slot := &c.entries[maphash.Bytes(c.seed, raw)%uint64(len(c.entries))]
	if e := slot.Load(); e != nil && bytes.Equal(e.raw, raw) {
		return append(dst, e.text...)
	}
	text := jsonw.Plain(nil, string(raw))
	slot.Store(&escaped{raw: bytes.Clone(raw), text: text})
	return append(dst, text...)
}

// validID reports whether id is a JSON-RPC request id that the SDK
// echoes byte for byte: a string, or an integer in canonical form that a
// float64 holds exactly (the SDK reads numbers as float64 and writes them
// back as int64, so 1.5, 1e3, -0 and 2^63 come back changed: those are
// left to the SDK).
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"':
		var s string
		return decode(id, &s) == nil
	case c == '-' || c >= '0' && c <= '9':
		digits := id
		if c == '-' {
			digits = id[1:]
		}
		if len(digits) == 0 || len(digits) > 16 || digits[0] == '0' && (len(digits) > 1 || c == '-') {
			return false
		}
		var n uint64
		for _, d := range digits {
			if d < '0' || d > '9' {
				return false
			}
			n = n*10 + uint64(d-'0')
		}
		return n <= 1<<53
	}
	return false
}

// era tells a request of the 2025 protocols from one of 2026-07-28 (which
// carries its version and capabilities in _meta and names itself in
// headers), and refuses whatever the SDK should judge.
func era(meta *requestMeta, header func(string) string, name string) (modern, ok bool) {
	versionHeader := header("Mcp-Protocol-Version")
	if meta == nil || meta.ProtocolVersion == nil {
		return false, legacyVersion(versionHeader)
	}
	var v string
	if decode(meta.ProtocolVersion, &v) != nil {
		return false, false
	}
	if v < modernVersion {
		return false, legacyVersion(versionHeader)
	}
	caps := bytes.TrimSpace(meta.Capabilities)
	if v != modernVersion || versionHeader != modernVersion || len(caps) == 0 || caps[0] != '{' ||
		header("Mcp-Method") != "tools/call" || header("Mcp-Name") != name {
		return false, false
	}
	if meta.ClientInfo != nil {
		var impl struct {
			Name    string `json:"name"`
			Version string `json:"version"`
		}
		if decode(meta.ClientInfo, &impl) != nil {
			return false, false
		}
	}
	return true, true
}

// decode reads one JSON value into v as the SDK reads messages: keys
// match struct fields only in their exact case. Anything after the value
// is an error.
func decode(b []byte, v any) error {
	rest, err := json.Parse(b, v, json.DontMatchCaseInsensitiveStructFields)
	if err != nil {
		return err
	}
	if len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return errTrailing
	}
	return nil
}

var errTrailing = errors.New("bytes after the JSON value")
