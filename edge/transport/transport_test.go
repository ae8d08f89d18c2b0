package transport

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"regexp"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// TestRawAndPlainAnswersIdentical serves one app twice, on a raw listener
// and on a plain one (EDGE_RAW_IO=false), and checks that every answer
// (small, at the memfd threshold, large, HEAD, and a run of them on one
// keep-alive connection) is the same bytes on the wire both ways, headers
// included but for Date.
func TestRawAndPlainAnswersIdentical(t *testing.T) {
	bodies := map[string][]byte{
		"/small":     bytes.Repeat([]byte("s"), 100),
		"/threshold": bytes.Repeat([]byte("t"), min(MinFileSize, 32<<10)),
		"/large":     bytes.Repeat([]byte("edge "), 200_000),
	}
	files := map[string]*File{}
	for path, b := range bodies {
		files[path] = NewFile(b)
	}
	serve := func(raw bool) string {
		app := fiber.New(fiber.Config{DisableStartupMessage: true})
		app.Get("/:name", func(c *fiber.Ctx) error {
			path := "/" + c.Params("name")
			c.Set("ETag", `W/"x"`)
			if Send(c.Context(), files[path]) {
				return nil
			}
			return c.Send(bodies[path])
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go app.Listener(Listen(ln, Options{Raw: raw}))
		t.Cleanup(func() { app.Shutdown() })
		return ln.Addr().String()
	}
	date := regexp.MustCompile(`(?m)^Date: .*\r\n`)
	exchange := func(addr string) []byte {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		conn.SetDeadline(time.Now().Add(20 * time.Second))
		r := bufio.NewReader(conn)
		var out bytes.Buffer
		for _, req := range []string{"GET /small", "GET /threshold", "GET /large", "HEAD /large", "GET /large", "GET /small"} {
			if _, err := io.WriteString(conn, req+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(r, &http.Request{Method: req[:bytes.IndexByte([]byte(req), ' ')]})
			if err != nil {
				t.Fatalf("%s: %v", req, err)
			}
			var raw bytes.Buffer
			resp.Write(&raw)
			out.Write(date.ReplaceAll(raw.Bytes(), nil))
		}
		return out.Bytes()
	}
	raw, plain := exchange(serve(true)), exchange(serve(false))
	if len(raw) < 2_000_000 {
		t.Fatalf("only %d bytes exchanged; the large answers are missing", len(raw))
	}
	if !bytes.Equal(raw, plain) {
		t.Fatalf("raw and plain connections answer differently: %d and %d bytes", len(raw), len(plain))
	}
}

// TestListenOff checks that with raw I/O off Listen keeps the standard
// connections, wrapped only so that they can linger (see Linger).
func TestListenOff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if l, ok := Listen(ln, Options{}).(lingerListener); !ok || l.Listener != ln {
		t.Error("Listen(ln, false) did not leave the standard connections, only able to linger")
	}
	if Send(nil, nil) {
		t.Error("Send of no file reported success")
	}
}
