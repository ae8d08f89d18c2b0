package transport

import (
	"bufio"
	"bytes"
	"strings"
	"testing"

	"github.com/valyala/fasthttp"
)

func TestFrame(t *testing.T) {
	const get = "GET /api/summary HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip, br\r\n\r\n"
	cases := []struct {
		name string
		in   string
		n    int
		kind FrameKind
	}{
		{"whole", get, len(get), FrameWhole},
		{"whole, then more", get + "GET /", len(get), FrameWhole},
		{"head", "HEAD / HTTP/1.1\r\n\r\n", 19, FrameWhole},
		{"no headers", "GET / HTTP/1.1\r\n\r\n", 18, FrameWhole},
		{"empty", "", 0, FrameShort},
		{"method begun", "GE", 0, FrameShort},
		{"line begun", "GET /api/sum", 0, FrameShort},
		{"CR of the empty line", "GET / HTTP/1.1\r\nHost: x\r\n\r", 0, FrameShort},
		{"in a header", "GET / HTTP/1.1\r\nAccept-Enc", 0, FrameShort},
		{"post", "POST / HTTP/1.1\r\n\r\n", 0, FrameOther},
		{"lower-case method", "get / HTTP/1.1\r\n\r\n", 0, FrameOther},
		{"absolute form", "GET http://x/ HTTP/1.1\r\n\r\n", 0, FrameOther},
		{"asterisk", "GET * HTTP/1.1\r\n\r\n", 0, FrameOther},
		{"HTTP/1.0", "GET / HTTP/1.0\r\n\r\n", 0, FrameOther},
		{"two spaces", "GET /  HTTP/1.1\r\n\r\n", 0, FrameOther},
		{"tab in the target", "GET /a\tb HTTP/1.1\r\n\r\n", 0, FrameOther},
		{"bare LF", "GET / HTTP/1.1\nHost: x\n\n", 0, FrameOther},
		{"bare LF in a header", "GET / HTTP/1.1\r\nHost: x\n\r\n", 0, FrameOther},
		{"bare CR in a value", "GET / HTTP/1.1\r\nHost: a\rb\r\n\r\n", 0, FrameOther},
		{"obsolete folding", "GET / HTTP/1.1\r\nHost: x\r\n y\r\n\r\n", 0, FrameOther},
		{"space before the colon", "GET / HTTP/1.1\r\nHost : x\r\n\r\n", 0, FrameOther},
		{"no colon", "GET / HTTP/1.1\r\nHost\r\n\r\n", 0, FrameOther},
		{"empty name", "GET / HTTP/1.1\r\n: x\r\n\r\n", 0, FrameOther},
		{"NUL in a value", "GET / HTTP/1.1\r\nHost: a\x00b\r\n\r\n", 0, FrameOther},
		{"DEL in a value", "GET / HTTP/1.1\r\nHost: a\x7fb\r\n\r\n", 0, FrameOther},
		{"body length", "GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nhello", 0, FrameOther},
		{"body length, odd case", "GET / HTTP/1.1\r\ncOnTeNt-LeNgTh: 0\r\n\r\n", 0, FrameOther},
		{"chunked", "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 0, FrameOther},
		{"expect", "GET / HTTP/1.1\r\nExpect: 100-continue\r\n\r\n", 0, FrameOther},
		{"upgrade", "GET / HTTP/1.1\r\nUpgrade: h2c\r\n\r\n", 0, FrameOther},
		{"obs-text value", "GET / HTTP/1.1\r\nX: caf\xc3\xa9\r\n\r\n", 28, FrameWhole},
		{"too long", "GET /" + strings.Repeat("a", MaxFrame) + " HTTP/1.1\r\n\r\n", 0, FrameOther},
		{"too long, begun", "GET /" + strings.Repeat("a", MaxFrame), 0, FrameOther},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n, kind := Frame([]byte(c.in))
			if n != c.n || kind != c.kind {
				t.Errorf("Frame(%q) = %d, %d; want %d, %d", c.in, n, kind, c.n, c.kind)
			}
		})
	}
}

// FuzzFrame holds Frame to what fasthttp reads: a request Frame calls
// whole is one fasthttp reads as a GET or HEAD of exactly those bytes,
// with no body; every prefix of it is FrameShort; and Frame never calls
// bytes whole that fasthttp would read as more or less than one request.
func FuzzFrame(f *testing.F) {
	for _, s := range []string{
		"GET /api/summary HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: x\r\n\r\nGET / HTTP/1.1\r\n\r\n",
		"HEAD /api/v1/listings?page=2 HTTP/1.1\r\nIf-None-Match: W/\"x\"\r\n\r\n",
		"GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc",
		"GET / HTTP/1.1\nHost: x\n\n",
		"GET / HTTP/1.1\r\nX: \t\xff\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, kind := Frame(b)
		if kind != FrameWhole {
			if n != 0 {
				t.Fatalf("Frame(%q) = %d, %d: a length without a whole request", b, n, kind)
			}
			return
		}
		if n <= 0 || n > len(b) || n > MaxFrame || !bytes.HasSuffix(b[:n], []byte("\r\n\r\n")) {
			t.Fatalf("Frame(%q) = %d: not a request's end", b, n)
		}
		if i := bytes.Index(b, []byte("\r\n\r\n")); i+4 != n {
			t.Fatalf("Frame(%q) = %d, but the first empty line ends at %d", b, n, i+4)
		}
		for k := range n {
			if _, kind := Frame(b[:k]); kind != FrameShort {
				t.Fatalf("Frame(%q) of a whole request's first %d bytes = %d, want FrameShort", b[:k], k, kind)
			}
		}
		var req fasthttp.Request
		br := bufio.NewReaderSize(bytes.NewReader(b), 2*MaxFrame)
		if err := req.Read(br); err != nil {
			return // fasthttp refuses it: it answers 400 and closes the connection
		}
		if !req.Header.IsGet() && !req.Header.IsHead() {
			t.Fatalf("fasthttp read %q as %s", b[:n], req.Header.Method())
		}
		if len(req.Body()) != 0 {
			t.Fatalf("fasthttp read a body in %q", b)
		}
		if read := len(b) - br.Buffered(); read != n {
			t.Fatalf("fasthttp read %d bytes of %q, Frame %d", read, b, n)
		}
	})
}
