package edge_test

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/limits"
)

// BenchmarkServeLoopback is a cached answer served over a real keep-alive
// TCP connection on loopback, as wrk asks for it: the whole server path
// (fasthttp's connection loop, fiber, the limits, the answer cache, and
// sendfile for a large answer). The client reads with buffers of its own
// and allocates nothing, so allocs/op are the server's per request.
func BenchmarkServeLoopback(b *testing.B) {
	high := limits.Policy{PerMinute: 1 << 30, PerDay: 1 << 40}
	h := start(b, synthetic(b), withLimits(high, high), func(c *edge.Config) { c.FairUseRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		b.Fatal(err)
	}
	addr := strings.TrimPrefix(h.Base, "http://")
	for _, path := range []string{"/api/v1/categories/chrome", "/api/v1/listings", "/api/summary", "/api/extensions?platform=0"} {
		b.Run(strings.TrimPrefix(path, "/api/"), func(b *testing.B) {
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close()
			req := []byte("GET " + path + " HTTP/1.1\r\nHost: bench\r\n\r\n")
			r := bufio.NewReaderSize(conn, 64<<10)
			body := make([]byte, 1<<20)
			n := roundTrip(b, conn, r, req, body) // warms the cache
			b.SetBytes(int64(n))
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				roundTrip(b, conn, r, req, body)
			}
		})
	}
}

// roundTrip sends req and reads a 200's headers and body into body,
// returning the body's length; it allocates nothing.
func roundTrip(b *testing.B, conn net.Conn, r *bufio.Reader, req, body []byte) int {
	if _, err := conn.Write(req); err != nil {
		b.Fatal(err)
	}
	size := -1
	for first := true; ; first = false {
		line, err := r.ReadSlice('\n')
		if err != nil {
			b.Fatal(err)
		}
		if first && !bytes.HasPrefix(line, []byte("HTTP/1.1 200 ")) {
			b.Fatalf("status line %q", line)
		}
		if len(line) <= 2 {
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			size, _ = strconv.Atoi(string(bytes.TrimSpace(v)))
		}
	}
	if size < 0 || size > len(body) {
		b.Fatalf("content length %d", size)
	}
	if _, err := io.ReadFull(r, body[:size]); err != nil {
		b.Fatal(err)
	}
	return size
}
