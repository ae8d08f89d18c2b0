//go:build linux && (amd64 || arm64)

package transport

import (
	"bufio"
	"bytes"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sys/unix"
)

// testBody is a body with its memfd, as the answer cache keeps them.
type testBody struct {
	Body []byte
	file *File
}

// sendBody sends b as the answer cache does: from its memfd when the
// connection can, else from memory.
func sendBody(c *fiber.Ctx, b testBody) error {
	if Send(c.Context(), b.file) {
		return nil
	}
	return c.Send(b.Body)
}

// TestSendfilePath serves large answers through Listen's connections
// and checks that they take the sendfile path (a body stream from the
// memfd) and arrive whole, byte for byte, on one keep-alive connection:
// an answer just above the threshold, a middle one (a stream written from
// memory, no memfd), and one of 8 MB read by a client
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
	answers := map[string]testBody{}
	for path, size := range map[string]int{"/small": 1000, "/middle": 12 << 10, "/threshold": MinFileSize, "/large": 8 << 20} {
		a := testBody{Body: body(size)}
		if size >= MinStreamSize && size < MinFileSize {
			// A stream from memory: no memfd.
			if a.file = NewFile(a.Body); a.file == nil || a.file.Memfd() {
				t.Fatalf("a %d-byte body: %+v, want a stream from memory", size, a.file)
			}
		} else if size >= MinFileSize {
			if a.file = NewFile(a.Body); a.file == nil {
				t.Fatal("no memfd")
			}
			if fl, err := unix.FcntlInt(uintptr(a.file.fd), unix.F_GETFL, 0); err != nil || fl&unix.O_NOATIME == 0 {
				t.Errorf("memfd flags %#o, %v: want O_NOATIME, so that sends do not update its access time", fl, err)
			}
			if seals, err := unix.FcntlInt(uintptr(a.file.fd), unix.F_GET_SEALS, 0); err != nil || seals&unix.F_SEAL_WRITE == 0 {
				t.Errorf("memfd seals %#x, %v: want the body sealed against writes", seals, err)
			}
		} else if NewFile(a.Body) != nil {
			t.Errorf("a %d-byte body got a memfd; want only bodies of %d bytes or more", size, MinFileSize)
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
	go app.Listener(Listen(ln, Options{Raw: true}))
	t.Cleanup(func() { app.Shutdown() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.(*net.TCPConn).SetReadBuffer(16 << 10)
	r := bufio.NewReader(conn)
	for _, path := range []string{"/threshold", "/small", "/middle", "/large", "/threshold", "/middle"} {
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
	if n := streamed.Load(); n != 5 {
		t.Errorf("%d answers were sent as streams; want the 3 large ones (sendfile) and the 2 middle ones (one write)", n)
	}
}

// TestRawConnDeadlines checks that the raw reads of Listen's
// connections keep net.Conn's behavior that fasthttp relies on: a request
// that does not arrive within the read timeout gets fasthttp's 408 (a
// timeout error), a keep-alive connection idle past the idle timeout is
// closed, and a client that closes its side ends the connection quietly.
func TestRawConnDeadlines(t *testing.T) {
	app := fiber.New(fiber.Config{DisableStartupMessage: true,
		ReadTimeout: 300 * time.Millisecond, IdleTimeout: 300 * time.Millisecond})
	var conns atomic.Int32
	app.Get("/", func(c *fiber.Ctx) error {
		if _, ok := c.Context().Conn().(*rawConn); ok {
			conns.Add(1)
		}
		return c.SendString("ok")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go app.Listener(Listen(ln, Options{Raw: true}))
	t.Cleanup(func() { app.Shutdown() })
	dial := func() (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.SetDeadline(time.Now().Add(10 * time.Second)) // a broken server fails the test instead of hanging it
		return conn, bufio.NewReader(conn)
	}

	t.Run("read timeout", func(t *testing.T) {
		conn, r := dial()
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: te") // never finished
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestTimeout {
			t.Errorf("status %d; want 408", resp.StatusCode)
		}
	})
	t.Run("idle timeout", func(t *testing.T) {
		conn, r := dial()
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: test\r\n\r\n")
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || string(body) != "ok" {
			t.Fatalf("%d %q", resp.StatusCode, body)
		}
		start := time.Now()
		if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("idle connection: read %d, %v; want the server to close it", n, err)
		}
		if time.Since(start) > 5*time.Second {
			t.Error("the idle connection outlived the idle timeout by far")
		}
	})
	t.Run("client closes", func(t *testing.T) {
		conn, r := dial()
		io.WriteString(conn, "GET / HTTP/1.1\r\nHost: test\r\n\r\n")
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		conn.(*net.TCPConn).CloseWrite()
		if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
			t.Fatalf("after the client's close: read %d, %v; want the server to close without an answer", n, err)
		}
	})
	if n := conns.Load(); n != 2 {
		t.Errorf("%d requests came on Listen's connections; want 2", n)
	}
}

// TestRawConnWriteDeadline checks the write deadline of Listen's
// connections, which is armed only when a send waits: a deadline armed by
// an earlier answer that has since passed does not refuse the next answer,
// and a client that stops reading a large answer has its connection
// closed after the write timeout. Each case has its own server: the first
// needs a write timeout long enough for 8 MB to cross a 16 KB receive
// buffer on a loaded machine under the race detector, the second a short
// one.
func TestRawConnWriteDeadline(t *testing.T) {
	large := testBody{Body: bytes.Repeat([]byte("edge "), 8<<20/5)}
	if large.file = NewFile(large.Body); large.file == nil {
		t.Fatal("no memfd")
	}
	stream := filepath.Join(t.TempDir(), "stream")
	if err := os.WriteFile(stream, large.Body, 0o644); err != nil {
		t.Fatal(err)
	}
	serve := func(t *testing.T, writeTimeout time.Duration) string {
		app := fiber.New(fiber.Config{DisableStartupMessage: true, WriteTimeout: writeTimeout})
		app.Get("/large", func(c *fiber.Ctx) error { return sendBody(c, large) })
		app.Get("/small", func(c *fiber.Ctx) error { return c.SendString("ok") })
		app.Get("/stream", func(c *fiber.Ctx) error { // a file streamed as the exports are
			f, err := os.Open(stream)
			if err != nil {
				return err
			}
			c.Response().SetBodyStream(f, len(large.Body))
			return nil
		})
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go app.Listener(Listen(ln, Options{Raw: true}))
		t.Cleanup(func() { app.Shutdown() })
		return ln.Addr().String()
	}
	dial := func(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		conn.(*net.TCPConn).SetReadBuffer(16 << 10) // the server's sends must wait
		conn.SetDeadline(time.Now().Add(30 * time.Second))
		return conn, bufio.NewReader(conn)
	}
	get := func(conn net.Conn, r *bufio.Reader, path string, wait time.Duration) ([]byte, error) {
		if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: test\r\n\r\n"); err != nil {
			return nil, err
		}
		time.Sleep(wait)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		return io.ReadAll(resp.Body)
	}

	t.Run("a passed deadline does not refuse the next answer", func(t *testing.T) {
		const timeout = 3 * time.Second
		conn, r := dial(t, serve(t, timeout))
		start := time.Now()
		if body, err := get(conn, r, "/large", 0); err != nil || !bytes.Equal(body, large.Body) {
			t.Fatalf("large answer: %d bytes, %v", len(body), err)
		}
		time.Sleep(time.Until(start.Add(timeout + 200*time.Millisecond))) // the deadline armed while it was sent passes
		if body, err := get(conn, r, "/small", 0); err != nil || string(body) != "ok" {
			t.Fatalf("next answer: %q, %v", body, err)
		}
	})
	for _, path := range []string{"/large", "/stream"} {
		t.Run("a client that stops reading is cut off: "+path, func(t *testing.T) {
			conn, r := dial(t, serve(t, 400*time.Millisecond))
			body, err := get(conn, r, path, 1500*time.Millisecond)
			if err == nil || len(body) == len(large.Body) {
				t.Fatalf("read %d of %d bytes, err %v; want the server to close the connection", len(body), len(large.Body), err)
			}
		})
	}
}

// TestFileStreamReadAfterSend checks that a stream whose body was sent
// reads as ended instead of touching the body it let go.
func TestFileStreamReadAfterSend(t *testing.T) {
	f := NewFile(bytes.Repeat([]byte("x"), MinFileSize))
	if f == nil {
		t.Fatal("no memfd")
	}
	s := fileStream{f: f}
	var sink bytes.Buffer
	if n, err := s.WriteTo(&sink); err != nil || n != int64(MinFileSize) {
		t.Fatalf("WriteTo: %d, %v", n, err)
	}
	if n, err := s.Read(make([]byte, 10)); n != 0 || err != io.EOF {
		t.Fatalf("Read after the send: %d, %v; want 0, EOF", n, err)
	}
	if n, err := s.WriteTo(&sink); n != 0 || err != nil {
		t.Fatalf("second WriteTo: %d, %v; want nothing sent", n, err)
	}
}
