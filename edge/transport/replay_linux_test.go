//go:build linux && (amd64 || arm64)

package transport

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// fakeReplayer answers GET /fast with "fast" (the slow path answers it
// "FAST"), from any connection.
type fakeReplayer struct{ replayed atomic.Int64 }

func (f *fakeReplayer) Replay(c Conn, req []byte) (bool, error) {
	if !strings.HasPrefix(string(req), "GET /fast ") {
		return false, nil
	}
	f.replayed.Add(1)
	head := append(c.Scratch(), "HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n"...)
	return true, c.Respond(head, []byte("fast"), nil)
}

// replayServer serves /fast and /slow through Listen with a fakeReplayer;
// /slow answers "slow <length of its Candidate>".
func replayServer(t *testing.T, timeout time.Duration) (string, *fakeReplayer) {
	t.Helper()
	app := fiber.New(fiber.Config{DisableStartupMessage: true, ReadTimeout: timeout, IdleTimeout: timeout})
	app.Get("/fast", func(c *fiber.Ctx) error { return c.SendString("FAST") })
	app.Get("/slow", func(c *fiber.Ctx) error {
		return c.SendString("slow " + strconv.Itoa(len(Candidate(c.Context()))))
	})
	app.Post("/slow", func(c *fiber.Ctx) error { return c.SendString("post " + strconv.Itoa(len(c.Body()))) })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeReplayer{}
	go app.Listener(Listen(ln, Options{Raw: true, Replay: f, ReadTimeout: timeout, IdleTimeout: timeout}))
	t.Cleanup(func() { app.Shutdown() })
	return ln.Addr().String(), f
}

const (
	fastReq = "GET /fast HTTP/1.1\r\nHost: x\r\n\r\n"
	slowReq = "GET /slow HTTP/1.1\r\nHost: x\r\n\r\n"
)

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
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
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

// TestReplayPathHead checks that a HEAD request, answered by fasthttp,
// keeps the connection on the replay path.
func TestReplayPathHead(t *testing.T) {
	addr, f := replayServer(t, 5*time.Second)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
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
			conn, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			br := bufio.NewReader(conn)
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
