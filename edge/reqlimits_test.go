package edge_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
)

// rawExchange sends head and then body (streamed while the answer is
// read, as a client that does not wait for 100-continue) on a connection
// of its own, and reads the answer. A reset connection is an error.
func rawExchange(t *testing.T, base, head string, body []byte) (*http.Response, []byte, error) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	if _, err := io.WriteString(conn, head); err != nil {
		return nil, nil, fmt.Errorf("write head: %w", err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := io.Copy(conn, bytes.NewReader(body))
		wrote <- err
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("read answer: %w", err)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, nil, fmt.Errorf("read body: %w", err)
	}
	if err := <-wrote; err != nil {
		return resp, b, fmt.Errorf("write body: %w", err)
	}
	return resp, b, nil
}

// TestRequestLimits attacks the request's bounds: a URI, a header
// section and a body each over its limit gets its own status (414, 431,
// 413) as problem+json whose detail names the limit, never a reset
// connection, and a 5 KB listing id is just an unknown listing.
func TestRequestLimits(t *testing.T) {
	for _, raw := range []bool{true, false} {
		t.Run(fmt.Sprintf("raw I/O %v", raw), func(t *testing.T) { requestLimits(t, raw) })
	}
}

func requestLimits(t *testing.T, raw bool) {
	h := start(t, synthetic(t), func(c *edge.Config) { c.RawIO = raw })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	get := func(target string, extra string) string {
		return "GET " + target + " HTTP/1.1\r\nHost: edge.test\r\n" + extra + "\r\n"
	}
	for _, c := range []struct {
		name   string
		head   string
		body   []byte
		status int
		detail string
	}{
		{"a 5 KB id", get("/api/v1/listings/chrome/"+strings.Repeat("a", 5000), ""), nil, 404, ""},
		{"a 9 KB URI", get("/api/v1/listings?q="+strings.Repeat("b", 9000), ""), nil, 414, "8 KiB"},
		{"a 15 KB URI", get("/api/extensions?q="+strings.Repeat("b", 15000), ""), nil, 414, "8 KiB"},
		{"a 40 KB URI", get("/api/extensions?q="+strings.Repeat("b", 40000), ""), nil, 431, "16 KiB"},
		{"20 KB of cookies", get("/api/v1/tags", "Cookie: "+strings.Repeat("c", 20000)+"\r\n"), nil, 431, "16 KiB"},
		{"300 headers", get("/api/v1/tags", strings.Repeat("X-Pad: 0123456789012345678901234567890123456789012345678901234567\r\n", 300)), nil, 431, "16 KiB"},
		{"an 8 MB tool call", "POST /mcp HTTP/1.1\r\nHost: edge.test\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 8388608\r\n\r\n",
			bytes.Repeat([]byte(" "), 8<<20), 413, "1 MiB"},
		{"an 8 MB sign-up", "POST /account HTTP/1.1\r\nHost: edge.test\r\nContent-Type: application/json\r\nContent-Length: 8388608\r\n\r\n",
			bytes.Repeat([]byte("x"), 8<<20), 413, "1 MiB"},
		// A header that does not parse: refused without quoting the
		// request back (the key in it included).
		{"a header without a colon", get("/api/v1/exports", "Authorization: Bearer edge_abcdefgh_SHOULDNOTECHO\r\nbroken\r\n"), nil, 400, "does not parse"},
	} {
		resp, body, err := rawExchange(t, h.Base, c.head, c.body)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var p struct{ Status int }
		if resp.StatusCode != c.status || resp.Header.Get("Content-Type") != "application/problem+json" ||
			json.Unmarshal(body, &p) != nil || p.Status != c.status || !strings.Contains(string(body), c.detail) {
			t.Errorf("%s: %d %s %s, want %d problem+json naming %q", c.name, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.status, c.detail)
		}
		if strings.Contains(string(body), "SHOULDNOTECHO") || strings.Contains(string(body), "Authorization") {
			t.Errorf("%s: the answer quotes the request: %s", c.name, body)
		}
	}
	// The edge still answers.
	if a := call(t, "GET", h.Base+"/api/v1/tags", nil, ""); a.status != 200 {
		t.Fatalf("after the attacks: %d", a.status)
	}
}
