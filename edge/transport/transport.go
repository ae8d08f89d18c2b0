package transport

import (
	"net"
	"net/netip"
	"time"

	"github.com/valyala/fasthttp"
)

// Options are how Listen's connections read and write.
type Options struct {
	// Raw makes TCP connections use raw system calls and sendfile (when
	// the system has them); false leaves the standard library's.
	Raw bool
	// Replay, when not nil, answers requests a raw connection reads
	// before fasthttp sees them (see Replayer).
	Replay Replayer
	// The server's timeouts, which a connection answering on the replay
	// path applies as fasthttp would: ReadTimeout to a request begun,
	// IdleTimeout between requests, WriteTimeout to an answer (0: none).
	ReadTimeout, IdleTimeout, WriteTimeout time.Duration
}

// Listen wraps ln so that its TCP connections use the raw path when
// opts.Raw is true (and the system has it), and can linger on close (see
// Linger) either way.
func Listen(ln net.Listener, opts Options) net.Listener {
	sem := make(chan struct{}, maxLingering)
	if !opts.Raw || !rawSupported {
		return lingerListener{ln, sem}
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = opts.ReadTimeout // as fasthttp does
	}
	return rawListener{Listener: ln, sem: sem, opts: opts, live: newLiveConns()}
}

// Drain ends, on a listener of Listen, every connection that waits on the
// replay path for its next request, and makes every other one end when it
// next reaches a request boundary: fasthttp's Shutdown ends the
// connections it sees idle, but not those the replay path answers, for
// which fasthttp is still reading a request. A server calls it when it
// stops.
func Drain(ln net.Listener) {
	if l, ok := ln.(rawListener); ok && l.live != nil {
		l.live.drain()
	}
}

// Send sets f as the body of ctx's response, to be sent from f's memfd by
// sendfile, and reports whether it could: it cannot when f is nil or the
// request came on a connection Listen did not wrap. A caller then sends
// the bytes from memory.
func Send(ctx *fasthttp.RequestCtx, f *File) bool {
	if f == nil {
		return false
	}
	return sendFile(ctx, f)
}

// A Replayer answers requests on a raw connection before fasthttp reads
// them: the replay path. While every request a connection has sent is
// whole and qualifies (Frame), the connection knows where each request
// starts. At such a boundary, with fasthttp waiting for the next request
// and its answers all written, it offers each whole request to the
// Replayer; one the Replayer does not answer goes to fasthttp as read.
// A request handed to fasthttp alone and whole is the request's
// Candidate while it is served, so that the server can learn its answer.
type Replayer interface {
	// Replay answers req, a whole request (its line, headers and empty
	// line), on c, and reports whether it did; false leaves it to
	// fasthttp. An error is the connection's: it is closed.
	Replay(c Conn, req []byte) (bool, error)
}

// Conn is a connection as a Replayer sees it.
type Conn interface {
	// Peer returns the address the connection comes from.
	Peer() netip.Addr
	// Scratch returns a buffer of the connection to build an answer's
	// head in; Respond keeps what it is given for the next call.
	Scratch() []byte
	// Respond sends an answer: head, then body from memory or f's memfd.
	Respond(head, body []byte, f *File) error
}

// Candidate returns the request ctx serves when it came to fasthttp
// alone, whole and qualifying on a connection that answers on the replay
// path: its bytes as read, valid while ctx is served. nil otherwise.
func Candidate(ctx *fasthttp.RequestCtx) []byte { return candidate(ctx) }

// Note returns a place for a Replayer's notes about the request ctx
// serves, which lives as long as the connection; nil when the request is
// not a Candidate.
func Note(ctx *fasthttp.RequestCtx) *any { return note(ctx) }
