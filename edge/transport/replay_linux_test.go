//go:build linux && (amd64 || arm64)

package transport

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// fakeReplayer answers GET /fast with "fast" (the slow path answers it
// "FAST"), from any connection, and GET /large/<n> with its large
// bodies (large[n]).
type fakeReplayer struct {
	replayed atomic.Int64
	large    []testBody
}

func (f *fakeReplayer) Replay(c Conn, req []byte) (bool, error) {
	body, file := []byte("fast"), (*File)(nil)
	switch {
	case strings.HasPrefix(string(req), "GET /fast "):
	case strings.HasPrefix(string(req), "GET /large/"):
		b := f.large[req[len("GET /large/")]-'0']
		body, file = b.Body, b.file
	default:
		return false, nil
	}
	f.replayed.Add(1)
	head := append(c.Scratch(), "HTTP/1.1 200 OK\r\nContent-Length: "+strconv.Itoa(len(body))+"\r\n\r\n"...)
	return true, c.Respond(head, body, file)
}

// replayServer serves /fast and /slow through Listen with a fakeReplayer;
// /slow answers "slow <length of its Candidate>".
func replayServer(t *testing.T, timeout time.Duration, large ...testBody) (string, *fakeReplayer) {
	t.Helper()
	return replayServerBuffer(t, timeout, 0, large...)
}

// replayServerBuffer is replayServer with fasthttp's read buffer (the
// edge's EDGE_MAX_HEADER_BYTES) of size bytes (fasthttp's default when 0).
func replayServerBuffer(t *testing.T, timeout time.Duration, size int, large ...testBody) (string, *fakeReplayer) {
	t.Helper()
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ReadTimeout: timeout, IdleTimeout: timeout, ReadBufferSize: size})
	app.Get("/fast", func(c *fiber.Ctx) error { return c.SendString("FAST") })
	app.Get("/slow", func(c *fiber.Ctx) error {
		return c.SendString("slow " + strconv.Itoa(len(Candidate(c.Context()))))
	})
	app.Post("/slow", func(c *fiber.Ctx) error { return c.SendString("post " + strconv.Itoa(len(c.Body()))) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeReplayer{large: large}
	go app.Listener(Listen(ln, Options{Raw: true, Replay: f, ReadTimeout: timeout, IdleTimeout: timeout}))
	t.Cleanup(func() { app.Shutdown() })
	return ln.Addr().String(), f
}

const (
	fastReq = "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"
	slowReq = "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
)

// dialTest connects to addr for the test's length.
func dialTest(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, bufio.NewReader(conn)
}

// bodies reads n answers from br and returns their bodies (an answer to
// HEAD when head).
func bodies(t *testing.T, br *bufio.Reader, n int, head ...bool) []string {
	t.Helper()
	var out []string
	for i := range n {
		var req *http.Request
		if i < len(head) && head[i] {
			req = &http.Request{Method: http.MethodHead}
		}
		resp, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("answer %d: %v", len(out)+1, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, string(b))
	}
	return out
}

// TestReplayPath sends requests to a connection with a Replayer in the
// ways a client may (one at a time, pipelined, byte by byte, cut between
// writes) and checks that every answer comes, in order, from the replay
// path while the connection keeps to whole plain requests, and from
// fasthttp for good once it does not.
func TestReplayPath(t *testing.T) {
	cases := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"one at a time", []string{fastReq, slowReq, fastReq}, []string{"fast", "slow " + strconv.Itoa(len(slowReq)), "fast"}},
		// Requests handed to fasthttp together are answered by it, in order.
		{"pipelined", []string{fastReq + slowReq + fastReq + slowReq}, []string{"fast", "slow 0", "FAST", "slow 0"}},
		{"pipelined, then one at a time", []string{fastReq + fastReq + slowReq, fastReq}, []string{"fast", "fast", "slow " + strconv.Itoa(len(slowReq)), "fast"}},
		{"cut after a whole request", []string{slowReq + "GET /fa", "st HTTP/1.1\r\nHost: x\r\n\r\n"}, []string{"slow " + strconv.Itoa(len(slowReq)), "fast"}},
		{"byte by byte", strings.Split(fastReq+slowReq, ""), []string{"fast", "slow " + strconv.Itoa(len(slowReq))}},
		{"a body ends the path", []string{"POST /slow HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc", fastReq}, []string{"post 3", "FAST"}},
		{"HTTP/1.0 ends the path", []string{"GET /slow HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", fastReq}, []string{"slow 0", "FAST"}},
		{"an Upgrade header ends the path", []string{"GET /slow HTTP/1.1\r\nHost: x\r\nUpgrade: x\r\n\r\n", fastReq}, []string{"slow 0", "FAST"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr, f := replayServer(t, 5*time.Second)
			conn, br := dialTest(t, addr)
			var got []string
			for i, w := range c.writes {
				if _, err := conn.Write([]byte(w)); err != nil {
					t.Fatal(err)
				}
				if len(c.writes) > 4 {
					time.Sleep(time.Millisecond) // each byte in a read of its own, mostly
					continue
				}
				// One at a time: read what this write completes.
				if i < len(c.writes)-1 {
					got = append(got, bodies(t, br, strings.Count(w, "\r\n\r\n"))...)
				}
			}
			got = append(got, bodies(t, br, len(c.want)-len(got))...)
			if strings.Join(got, "|") != strings.Join(c.want, "|") {
				t.Errorf("answers %q, want %q", got, c.want)
			}
			fast := 0
			for _, w := range c.want {
				if w == "fast" {
					fast++
				}
			}
			if n := f.replayed.Load(); n != int64(fast) {
				t.Errorf("%d answers replayed, want %d", n, fast)
			}
		})
	}
}

// TestReplayPathLargeBodies replays bodies past the write buffer: one
// from memory in two parts, one from a memfd by sendfile, and one of 8 MB
// to a client that waits before it reads, so that the socket fills and
// the send waits in the poller. Each arrives whole, in order.
func TestReplayPathLargeBodies(t *testing.T) {
	var large []testBody
	for _, n := range []int{12 << 10, MinFileSize, 8 << 20} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('a' + i%23)
		}
		large = append(large, testBody{Body: b, file: NewFile(b)})
	}
	addr, f := replayServer(t, 5*time.Second, large...)
	if f.large[0].file.Memfd() || !f.large[1].file.Memfd() || !f.large[2].file.Memfd() {
		t.Fatal("the bodies are not sent the ways this test means")
	}
	conn, br := dialTest(t, addr)
	var reqs string
	for i := range f.large {
		reqs += "GET /large/" + strconv.Itoa(i) + " HTTP/1.1\r\nHost: x\r\n\r\n"
	}
	for round := range 2 { // the second time at a request boundary, one at a time
		if round == 0 {
			conn.Write([]byte(reqs + fastReq))
			time.Sleep(200 * time.Millisecond) // the 8 MB body fills the socket
			got := bodies(t, br, 4)
			for i, b := range f.large {
				if got[i] != string(b.Body) {
					t.Fatalf("pipelined body %d: %d bytes, want %d", i, len(got[i]), len(b.Body))
				}
			}
			continue
		}
		for i, b := range f.large {
			conn.Write([]byte("GET /large/" + strconv.Itoa(i) + " HTTP/1.1\r\nHost: x\r\n\r\n"))
			if got := bodies(t, br, 1); got[0] != string(b.Body) {
				t.Fatalf("body %d: %d bytes, want %d", i, len(got[0]), len(b.Body))
			}
		}
	}
	if n := f.replayed.Load(); n != 7 {
		t.Errorf("%d answers replayed, want 7", n)
	}
}

// TestReplayPathHead checks that a HEAD request, answered by fasthttp,
// keeps the connection on the replay path.
func TestReplayPathHead(t *testing.T) {
	addr, f := replayServer(t, 5*time.Second)
	conn, br := dialTest(t, addr)
	conn.Write([]byte("HEAD /slow HTTP/1.1\r\nHost: x\r\n\r\n"))
	bodies(t, br, 1, true)
	conn.Write([]byte(fastReq))
	if got := bodies(t, br, 1); got[0] != "fast" || f.replayed.Load() != 1 {
		t.Errorf("after HEAD: %q, %d replayed", got, f.replayed.Load())
	}
}

// TestReplayPathTimeouts checks that a connection on the replay path
// keeps fasthttp's timeouts: a request begun and left unfinished, and a
// connection left idle after a replayed answer, are closed once
// ReadTimeout and IdleTimeout pass.
func TestReplayPathTimeouts(t *testing.T) {
	for _, c := range []struct{ name, first, then string }{
		{"idle after a replayed answer", fastReq, ""},
		{"a request begun after a replayed answer", fastReq, "GET /fast HTTP/1.1\r\nHo"},
		{"a request begun", "", "GET /fa"},
	} {
		t.Run(c.name, func(t *testing.T) {
			addr, _ := replayServer(t, 300*time.Millisecond)
			conn, br := dialTest(t, addr)
			if c.first != "" {
				conn.Write([]byte(c.first))
				if got := bodies(t, br, 1); got[0] != "fast" {
					t.Fatalf("first answer %q", got)
				}
			}
			if c.then != "" {
				conn.Write([]byte(c.then))
			}
			conn.SetReadDeadline(time.Now().Add(10 * time.Second))
			rest, err := io.ReadAll(br)
			if err != nil {
				t.Fatalf("the connection was not closed by the server: %v", err)
			}
			if len(rest) > 0 && !strings.HasPrefix(string(rest), "HTTP/1.1 408") {
				t.Errorf("after the timeout: %q", rest)
			}
		})
	}
}

// TestReplayPathSmallBuffer: with fasthttp's read buffer
// smaller than MaxFrame (EDGE_MAX_HEADER_BYTES under 4096), a request
// begun that fills the buffer without its empty line made the read loop
// spin a core with an empty slice, and the connection was never closed.
// Now fasthttp gets the full buffer and refuses the request; the
// connection is answered or closed, and the server stops.
func TestReplayPathSmallBuffer(t *testing.T) {
	for _, size := range []int{64, 1024, 4000} {
		addr, _ := replayServerBuffer(t, 2*time.Second, size)
		conn, br := dialTest(t, addr)
		conn.Write([]byte(fastReq))
		if got := bodies(t, br, 1); got[0] != "fast" {
			t.Fatalf("buffer %d: %q", size, got)
		}
		// A request begun (read alone), then more of it than the buffer holds.
		conn.Write([]byte("GET /fast HTTP/1.1\r\nHo"))
		time.Sleep(50 * time.Millisecond)
		conn.Write([]byte("st: x\r\nX-Long: " + strings.Repeat("a", 2*size)))
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		rest, err := io.ReadAll(br)
		if err != nil && !errors.Is(err, syscall.ECONNRESET) { // closed with the request unread: a reset
			t.Fatalf("buffer %d: the connection was neither answered nor closed: %v", size, err)
		}
		if len(rest) > 0 && !strings.HasPrefix(string(rest), "HTTP/1.1 4") {
			t.Errorf("buffer %d: %q", size, rest)
		}
	}
}

// TestReplayPathPipelinesPastReadTimeout: a client that
// pipelines without a pause for twice ReadTimeout, each request whole
// within its own timeout but most reads ending inside the next request,
// gets every answer: each request begun has a ReadTimeout of its own.
func TestReplayPathPipelinesPastReadTimeout(t *testing.T) {
	const timeout = 300 * time.Millisecond
	addr, f := replayServer(t, timeout)
	conn, br := dialTest(t, addr)
	done := make(chan int)
	go func() {
		n := 0
		for {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Logf("after %d answers: %v", n, err)
				done <- n
				return
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			n++
		}
	}()
	// Each write finishes a request and begins the next.
	half := len(fastReq) / 2
	conn.Write([]byte(fastReq[:half]))
	sent := 0
	end := time.Now().Add(2 * timeout)
	for time.Now().Before(end) {
		time.Sleep(timeout / 10)
		conn.Write([]byte(fastReq[half:] + fastReq[:half]))
		sent++
	}
	conn.Write([]byte(fastReq[half:]))
	sent++
	time.Sleep(50 * time.Millisecond)
	conn.(*net.TCPConn).CloseWrite()
	if got := <-done; got != sent {
		t.Fatalf("%d answers to %d requests: the connection was cut while requests kept coming", got, sent)
	}
	if f.replayed.Load() == 0 {
		t.Fatal("nothing was replayed: the test does not exercise the replay path")
	}
}
