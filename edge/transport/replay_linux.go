//go:build linux && (amd64 || arm64)

package transport

import (
	"bytes"
	"io"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// replayState is a raw connection's side of the replay path (Replayer).
//
// fasthttp reads a connection through a buffered reader, which calls Read
// only when it has no unread byte left and needs more. While every byte
// Read has handed it was whole qualifying requests (Frame), fasthttp
// asking for more means it has read every one of them, answered them and
// written its answers out (it flushes before it waits for a request): the
// connection is at a request boundary, where an answer written straight
// to the socket comes in the right order. Read then offers each whole
// request at the head of what it reads to the Replayer, and hands
// fasthttp the first one the Replayer leaves, with what follows it.
//
// A request that does not qualify, or bytes the connection could not
// frame, end the replay path for the connection: from then on it reads
// for fasthttp alone. A request begun but not whole is read on until it
// is (within fasthttp's ReadTimeout and MaxFrame), or stays, when whole
// requests come before it, in carry for the next Read.
type replayState struct {
	opts    *Options
	peer    netip.Addr
	aligned bool   // at a request boundary whenever fasthttp reads
	carry   []byte // the start of a request read after whole ones handed to fasthttp
	cand    []byte // the request handed to fasthttp alone, while it is served
	note    any    // the Replayer's notes on cand
	scratch []byte // the head of an answer being built (Conn.Scratch)
	err     error  // Respond's, for Read to return
	conn    *rawConn
	live    *liveConns
	waiting atomic.Bool // blocked at a request boundary, with nothing read (see Drain)
}

// liveConns are a listener's connections on the replay path, so that a
// stopping server can end those waiting for their next request (Drain).
type liveConns struct {
	mu       sync.Mutex
	conns    map[*rawConn]struct{}
	draining atomic.Bool
}

func newLiveConns() *liveConns { return &liveConns{conns: map[*rawConn]struct{}{}} }

func (l *liveConns) add(c *rawConn) {
	l.mu.Lock()
	l.conns[c] = struct{}{}
	l.mu.Unlock()
}

func (l *liveConns) remove(c *rawConn) {
	l.mu.Lock()
	delete(l.conns, c)
	l.mu.Unlock()
}

// drain marks the connections as draining and wakes those waiting at a
// request boundary: their wait ends at once (a read deadline of now),
// and the read that waited ends the connection (io.EOF, as a client's
// close would).
func (l *liveConns) drain() {
	l.draining.Store(true)
	l.mu.Lock()
	defer l.mu.Unlock()
	for c := range l.conns {
		if c.replay.waiting.Load() {
			c.TCPConn.SetReadDeadline(time.Now())
		}
	}
}

var crlfcrlf = []byte("\r\n\r\n")

// maxScratch is the largest buffer a connection keeps for the heads (and
// small bodies) of its replayed answers.
const maxScratch = MinStreamSize + 1<<10

// read is a replaying connection's Read.
func (r *replayState) read(c *rawConn, p []byte) (int, error) {
	r.cand = nil
	n := 0
	if len(r.carry) > 0 {
		n = copy(p, r.carry)
		r.carry = r.carry[:copy(r.carry, r.carry[n:])]
		if !r.aligned || len(r.carry) > 0 {
			r.aligned = false
			return n, nil
		}
	}
	if !r.aligned {
		return c.readRaw(p)
	}
	r.conn = c
	partial, served := false, false
	for {
		// Answer the whole requests at the head that the Replayer holds.
		for n > 0 {
			end := bytes.Index(p[:n], crlfcrlf)
			if end < 0 {
				break
			}
			ok, err := r.opts.Replay.Replay(r, p[:end+4])
			if err != nil {
				return 0, err
			}
			if !ok {
				break
			}
			n = copy(p, p[end+4:n])
			// The next request begun gets a ReadTimeout of its own: a
			// client pipelining without a pause ends most reads inside
			// a request, and must not run into the first one's deadline.
			served, partial = true, false
		}
		if n > 0 {
			// A request begun is framed again only once it may be whole
			// (or too long, or the buffer is full): a client sending a
			// byte at a time costs a search for the empty line a byte,
			// not a framing.
			if partial && n < min(len(p), MaxFrame) && bytes.Index(p[:n], crlfcrlf) < 0 {
				goto more
			}
			if k := r.handoff(p[:n]); k > 0 {
				return k, nil
			}
			// The start of a request: read the rest of it, within the
			// time fasthttp gives a request to arrive.
			if n == len(p) {
				r.aligned = false
				return n, nil
			}
			if !partial {
				partial = true
				if d := r.opts.ReadTimeout; d > 0 {
					c.read.want = time.Now().Add(d)
				}
			}
		} else if served {
			// Answered: wait for the next request as long as fasthttp
			// waits on a keep-alive connection.
			served, partial = false, false
			if d := r.opts.IdleTimeout; d > 0 {
				c.read.want = time.Now().Add(d)
			}
		}
	more:
		boundary := n == 0 && !partial
		if boundary && r.live.draining.Load() {
			return 0, io.EOF // the server stops: end at a request boundary
		}
		r.waiting.Store(boundary)
		m, err := c.readRaw(p[n:])
		r.waiting.Store(false)
		if r.live.draining.Load() {
			// Drain may have set the socket's deadline to now: arm the
			// one set again before the next wait.
			c.read.armed = time.Unix(1, 0)
			if boundary && m == 0 {
				return 0, io.EOF
			}
		}
		if err != nil {
			if n > 0 {
				// fasthttp gets what was read, and the error next.
				r.aligned = false
				return n, nil
			}
			return 0, err
		}
		n += m
	}
}

// handoff returns how much of b, unread bytes none of which the Replayer
// answered, to hand to fasthttp: every whole request, keeping a request
// begun after them in carry; 0 when b is a request begun and nothing
// else. It notes the Candidate, and whether the connection stays on the
// replay path.
func (r *replayState) handoff(b []byte) int {
	off, whole, first := 0, 0, 0
	for off < len(b) {
		n, kind := Frame(b[off:])
		switch kind {
		case FrameWhole:
			if whole == 0 {
				first = n
			}
			whole++
			off += n
			continue
		case FrameOther:
			r.aligned = false
			return len(b)
		}
		break // FrameShort
	}
	if whole == 0 {
		return 0
	}
	if off < len(b) {
		r.carry = append(r.carry[:0], b[off:]...)
	}
	if whole == 1 && hasPrefix(b, "GET ") {
		r.cand = b[:first]
	}
	return off
}

// Peer returns the connection's remote address.
func (r *replayState) Peer() netip.Addr { return r.peer }

// Scratch returns the connection's buffer for an answer's head.
func (r *replayState) Scratch() []byte { return r.scratch[:0] }

// Respond sends head, then body from memory or f's memfd. A small answer
// goes out in one write.
func (r *replayState) Respond(head, body []byte, f *File) error {
	c := r.conn
	if d := r.opts.WriteTimeout; d > 0 {
		c.write.want = time.Now().Add(d)
	}
	var err error
	switch {
	case f != nil && f.Memfd():
		_, err = c.sendHead(head, nil, f)
	case len(body) == 0 || len(head)+len(body) <= MinStreamSize:
		head = append(head, body...)
		_, err = c.Write(head)
	default:
		_, err = c.sendHead(head, body, nil)
	}
	// The buffer is kept for the next answer, unless a large body made
	// it large: a connection holds at most a few kilobytes for it.
	if cap(head) <= maxScratch {
		r.scratch = head[:0]
	}
	return err
}

func candidate(ctx *fasthttp.RequestCtx) []byte {
	if c, ok := ctx.Conn().(*rawConn); ok && c.replay != nil {
		return c.replay.cand
	}
	return nil
}

func note(ctx *fasthttp.RequestCtx) *any {
	if c, ok := ctx.Conn().(*rawConn); ok && c.replay != nil && c.replay.cand != nil {
		return &c.replay.note
	}
	return nil
}
