//go:build linux && (amd64 || arm64)

package transport

import (
	"bufio"
	"io"
	"net"
	"syscall"
	"time"
	"unsafe"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"
)

// sendFile sets f as the body stream of ctx's response when ctx's
// connection is a rawConn.
func sendFile(ctx *fasthttp.RequestCtx, f *File) bool {
	tc, ok := ctx.Conn().(*rawConn)
	if !ok {
		return false
	}
	// fasthttp serves one request of a connection at a time, so the
	// connection's one stream is free.
	tc.stream = fileStream{f: f, conn: tc}
	ctx.Response.SetBodyStream(&tc.stream, len(f.body))
	return true
}

// rawListener wraps a listener's TCP connections in rawConn.
type rawListener struct {
	net.Listener
	sem  chan struct{} // places of lingering connections (see Linger)
	opts Options
	live *liveConns // the connections on the replay path, for Drain
}

func (l rawListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return c, nil
	}
	sc := &rawConn{TCPConn: tc, raw: raw, lingerSem: l.sem}
	sc.onWrite, sc.onRead = sc.sendStep, sc.readStep
	if l.opts.Replay != nil {
		sc.replay = &replayState{opts: &l.opts, aligned: true, live: l.live}
		l.live.add(sc)
		if a, ok := tc.RemoteAddr().(*net.TCPAddr); ok {
			sc.replay.peer = a.AddrPort().Addr().Unmap()
		}
	}
	return sc, nil
}

// rawConn is an accepted TCP connection whose writes can be marked
// as followed by more data (MSG_MORE): a response's headers then wait in
// the socket for its body, sent by sendfile, and leave with it in whole
// segments, as nginx's tcp_nopush does, without the two setsockopt calls
// of TCP_CORK. fasthttp serves one request of a connection at a time, so
// its fields need no lock (reads and writes keep apart fields all the
// same).
//
// It reads and writes by raw system calls, waiting in the network poller
// whenever the socket has nothing to read or no room (so the
// connection's deadlines apply). On a non-blocking socket the calls never
// block, and a raw call keeps the scheduler from handing this goroutine's
// processor to another thread, and from waking its monitor thread to do
// so, while the kernel sends a large body. A read or send keeps its
// progress in the connection's fields and runs as a callback bound once,
// when the connection is accepted, so that it allocates nothing.
//
// See bench/README.md#the-cached-hot-path for what each of these saves.
type rawConn struct {
	*net.TCPConn
	raw    syscall.RawConn
	more   bool       // mark writes as followed by more data
	stream fileStream // the body stream of the response being sent

	linger    bool          // close gently (see Linger)
	lingerSem chan struct{} // the listener's places of lingering connections

	onWrite, onRead func(fd uintptr) bool // sendStep and readStep

	// Deadlines as set (want) and as the poller holds them (armed).
	read, write deadline
	// The send in progress: head (marked as followed by more), then buf
	// or file from off to end.
	head     []byte
	buf      []byte
	file     *File
	off, end int64
	sent     int64
	err      error
	// The read in progress.
	rbuf []byte
	got  int
	rerr error

	replay *replayState // nil: the connection does not answer on the replay path
}

// deadline is a read or write deadline of a rawConn. fasthttp sets
// one to now plus its timeout up to three times a request; each would
// arm the poller's timer. Instead the deadline is noted, and armed only
// when a read or write is about to wait, or when the armed one would
// end a call the set one allows: a call that needs no wait never needed
// the deadline. Every call that waits, waits under the deadline last set,
// as with net.Conn.
//
// A deadline is armed rounded up to the next multiple of slack: the
// deadlines a busy connection sets, each a little later than the last,
// share one arming of the poller's timer for slack, and a wait may end up
// to slack later than asked.
type deadline struct {
	want, armed time.Time
}

// slack is how much later than set a deadline may be armed.
const slack = 100 * time.Millisecond

// covered reports whether the armed deadline serves the one set: both
// none, or armed up to slack after it.
func (d *deadline) covered() bool {
	if d.want.IsZero() {
		return d.armed.IsZero()
	}
	return !d.armed.IsZero() && !d.armed.Before(d.want) && d.armed.Sub(d.want) <= slack
}

func (c *rawConn) lingerOnClose() { c.linger = true }

// Close closes the connection, gently when it was marked to linger.
func (c *rawConn) Close() error {
	if c.replay != nil {
		c.replay.live.remove(c)
	}
	if !c.linger {
		return c.TCPConn.Close()
	}
	return lingerClose(c.TCPConn, c.lingerSem)
}

// SetReadDeadline sets the deadline of future reads.
func (c *rawConn) SetReadDeadline(t time.Time) error {
	c.read.want = t
	return nil
}

// SetWriteDeadline sets the deadline of future writes.
func (c *rawConn) SetWriteDeadline(t time.Time) error {
	c.write.want = t
	return nil
}

// SetDeadline sets the deadline of future reads and writes.
func (c *rawConn) SetDeadline(t time.Time) error {
	c.read.want, c.write.want = t, t
	return nil
}

// early reports whether the armed deadline would refuse a call the set
// one allows: it must be armed again before the call. Only a deadline
// already past refuses a call that does not wait (the poller checks it
// before the call); a call that waits arms the set one first (waits). So
// an armed deadline still ahead is left as it is, and a connection whose
// every request moves its deadlines on does not re-arm the poller's
// timers for each one.
func (d *deadline) early() bool {
	return !d.armed.IsZero() && !d.covered() && (d.want.IsZero() || d.armed.Before(d.want)) &&
		!d.armed.After(time.Now())
}

// arm gives the poller c's read or write deadline as set, rounded up to
// a multiple of slack.
func (c *rawConn) arm(d *deadline) error {
	t := d.want
	if !t.IsZero() {
		t = t.Truncate(slack).Add(slack)
	}
	var err error
	if d == &c.read {
		err = c.TCPConn.SetReadDeadline(t)
	} else {
		err = c.TCPConn.SetWriteDeadline(t)
	}
	if err == nil {
		d.armed = t
	}
	return err
}

// ReadFrom sends what r holds through the embedded connection (a
// streamed body, such as an export file: fasthttp copies it with
// ReadFrom, sendfile for a file), whose writes bypass send: the write
// deadline as set is armed for them here, or a client that stops reading
// would hold the connection and its file past every timeout.
func (c *rawConn) ReadFrom(r io.Reader) (int64, error) {
	if err := c.arm(&c.write); err != nil {
		return 0, err
	}
	return c.TCPConn.ReadFrom(r)
}

// Write writes p, with MSG_MORE while more is set.
func (c *rawConn) Write(p []byte) (int, error) {
	c.buf, c.file, c.off, c.end = p, nil, 0, int64(len(p))
	n, err := c.send()
	return int(n), err
}

// Read reads into p; it returns io.EOF once the peer has closed its side.
// On a connection with a Replayer, it first offers it the requests read
// (see replayState.read).
func (c *rawConn) Read(p []byte) (int, error) {
	if c.replay != nil {
		return c.replay.read(c, p)
	}
	return c.readRaw(p)
}

// readRaw reads into p from the socket.
func (c *rawConn) readRaw(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.read.early() {
		if err := c.arm(&c.read); err != nil {
			return 0, err
		}
	}
	c.rbuf, c.got, c.rerr = p, 0, nil
	err := c.raw.Read(c.onRead)
	c.rbuf = nil
	if err == nil {
		err = c.rerr
	}
	return c.got, err
}

// readStep reads once into c's read buffer; false (wait in the poller
// and call again) while the socket has nothing to read.
func (c *rawConn) readStep(fd uintptr) bool {
	for {
		n, _, errno := syscall.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&c.rbuf[0])), uintptr(len(c.rbuf)))
		switch {
		case errno == unix.EAGAIN:
			return c.waits(&c.read, &c.rerr)
		case errno == unix.EINTR:
			continue
		case errno != 0:
			c.rerr = &net.OpError{Op: "read", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errno}
		case n == 0:
			c.rerr = io.EOF
		default:
			c.got = int(n)
		}
		return true
	}
}

// waits is the answer of a raw conn callback whose call must wait: false
// (wait in the poller and call again) once d is armed, true with *err
// set if it cannot be.
func (c *rawConn) waits(d *deadline, err *error) bool {
	if d.covered() {
		return false
	}
	if *err = c.arm(d); *err != nil {
		return true
	}
	return false
}

// sendFile sends f's bytes from off to its end.
func (c *rawConn) sendFile(f *File, off int64) (int64, error) {
	c.buf, c.file, c.off, c.end = nil, f, off, int64(len(f.body))
	return c.send()
}

// send runs the send set up in c's fields and returns the bytes sent.
func (c *rawConn) send() (int64, error) {
	if c.write.early() {
		if err := c.arm(&c.write); err != nil {
			return 0, err
		}
	}
	c.sent, c.err = 0, nil
	err := c.raw.Write(c.onWrite)
	if err == nil {
		err = c.err
	}
	c.buf, c.file = nil, nil
	return c.sent, err
}

// sendHead sends head marked as followed by more data, then f's bytes by
// sendfile when f is not nil, else body, in one call of the poller.
func (c *rawConn) sendHead(head, body []byte, f *File) (int64, error) {
	c.head, c.buf, c.file, c.off, c.end = head, body, f, 0, int64(len(body))
	if f != nil {
		c.buf, c.end = nil, int64(len(f.body))
	}
	n, err := c.send()
	c.head = nil
	return n, err
}

// sendStep sends from c's fields until done; false (wait in the poller
// and call again) when the socket is full.
func (c *rawConn) sendStep(fd uintptr) bool {
	for len(c.head) > 0 || c.off < c.end {
		var n uintptr
		var errno syscall.Errno
		switch {
		case len(c.head) > 0:
			n, _, errno = syscall.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&c.head[0])), uintptr(len(c.head)),
				uintptr(unix.MSG_NOSIGNAL|unix.MSG_MORE), 0, 0)
		case c.file != nil:
			off := c.off
			n, _, errno = syscall.RawSyscall6(unix.SYS_SENDFILE, fd, uintptr(c.file.fd),
				uintptr(unsafe.Pointer(&off)), uintptr(c.end-c.off), 0, 0)
		default:
			p := c.buf[c.off:]
			flags := unix.MSG_NOSIGNAL
			if c.more {
				flags |= unix.MSG_MORE
			}
			n, _, errno = syscall.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)),
				uintptr(flags), 0, 0)
		}
		switch {
		case errno == unix.EAGAIN:
			return c.waits(&c.write, &c.err)
		case errno == unix.EINTR:
			continue
		case errno != 0:
			c.err = &net.OpError{Op: "write", Net: "tcp", Source: c.LocalAddr(), Addr: c.RemoteAddr(), Err: errno}
			return true
		case n == 0:
			c.err = io.ErrUnexpectedEOF
			return true
		}
		if len(c.head) > 0 {
			c.head = c.head[n:]
		} else {
			c.off += int64(n)
		}
		c.sent += int64(n)
	}
	return true
}

// fileStream is the body stream of one response sent by sendfile. fasthttp
// calls WriteTo with its write buffer, which holds the headers.
type fileStream struct {
	f    *File // keeps the memfd open while the response is sent; nil once sent
	conn *rawConn
	off  int64
}

// WriteTo sends the headers marked as followed by more data, then the body
// from the memfd, or in one write from memory for a File without one. A
// writer other than fasthttp's write buffer gets the bytes from memory.
func (s *fileStream) WriteTo(w io.Writer) (int64, error) {
	if s.f == nil {
		return 0, nil
	}
	bw, ok := w.(*bufio.Writer)
	if !ok {
		n, err := w.Write(s.f.body[s.off:])
		s.off += int64(n)
		s.f = nil
		return int64(n), err
	}
	s.conn.more = true
	err := bw.Flush()
	s.conn.more = false
	if err != nil {
		return 0, err
	}
	if !s.f.Memfd() {
		n, err := s.conn.Write(s.f.body[s.off:])
		s.off += int64(n)
		s.f = nil
		return int64(n), err
	}
	n, err := s.conn.sendFile(s.f, s.off)
	s.off += n
	s.f = nil // sent: the connection keeps no body alive
	return n, err
}

// Read makes the stream an io.Reader, as fasthttp requires; fasthttp
// sends it with WriteTo. Once the body is sent, it reads nothing more.
func (s *fileStream) Read(p []byte) (int, error) {
	if s.f == nil || s.off >= int64(len(s.f.body)) {
		return 0, io.EOF
	}
	n := copy(p, s.f.body[s.off:])
	s.off += int64(n)
	return n, nil
}
