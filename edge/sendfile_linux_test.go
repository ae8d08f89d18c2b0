//go:build linux && (amd64 || arm64)

package edge

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// TestSendfilePath serves large answers through withSendfile's connections
// and checks that they take the sendfile path (a body stream from the
// memfd) and arrive whole, byte for byte, on one keep-alive connection:
// an answer just above the threshold, and one of 8 MB read by a client
// that waits first, so that the socket fills and the send waits in the
// poller. A small answer is sent from memory.
func TestSendfilePath(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	body := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + rng.IntN(26))
		}
		return b
	}
	answers := map[string]*Answer{}
	for path, size := range map[string]int{"/small": 1000, "/threshold": sendfileMin, "/large": 8 << 20} {
		a := NewAnswer(body(size), fiber.MIMEApplicationJSON)
		if size >= sendfileMin {
			if a.file = newBodyFile(a, a.Body); a.file == nil {
				t.Fatal("no memfd")
			}
		}
		answers[path] = a
	}
	var streamed atomic.Int32
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Get("/:name", func(c *fiber.Ctx) error {
		err := sendBody(c, answers["/"+c.Params("name")])
		if c.Response().IsBodyStream() {
			streamed.Add(1)
		}
		return err
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(withSendfile(ln))
	t.Cleanup(func() { app.Shutdown() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(16 << 10)
	r := bufio.NewReader(conn)
	for _, path := range []string{"/threshold", "/small", "/large", "/threshold"} {
		if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		if path == "/large" {
			time.Sleep(200 * time.Millisecond) // the server fills the socket and waits
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != 200 || !bytes.Equal(got, answers[path].Body) {
			t.Fatalf("%s: %d, %d bytes, err %v; want %d bytes", path, resp.StatusCode, len(got), err, len(answers[path].Body))
		}
	}
	if n := streamed.Load(); n != 3 {
		t.Errorf("%d answers took the sendfile path; want the 3 large ones", n)
	}
}
