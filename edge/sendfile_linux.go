//go:build linux && (amd64 || arm64)

package edge

import (
	"bufio"
	"io"
	"net"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"github.com/gofiber/fiber/v2"
	"golang.org/x/sys/unix"
)

// sendfileMin is the smallest body kept in a memfd and sent with
// sendfile(2). Below it, copying the bytes through the write buffer costs
// less than the extra system calls.
const sendfileMin = 32 << 10

// bodyFile is a large answer's bytes in an anonymous in-memory file
// (memfd). Each response sends them with sendfile(2) at an explicit offset,
// so the kernel copies from its own pages instead of every request copying
// the body from user space, as nginx does with a static file. Requests
// share one file: sendfile with an offset does not move the file's
// position.
type bodyFile struct {
	fd   int
	size int
}

// newBodyFile returns the memfd of body, closed once owner is unreachable
// (the answer it belongs to, which every request sending it holds). It
// returns nil when the kernel offers no memfd; the answer is then sent
// from memory.
func newBodyFile(owner *Answer, body []byte) *bodyFile {
	fd, err := unix.MemfdCreate("edge-answer", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil
	}
	for b := body; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			unix.Close(fd)
			return nil
		}
		b = b[n:]
	}
	// Sealed, the bytes can no longer change under a response.
	unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL)
	// Without access times, a send does not update the file's.
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_NOATIME)
	}
	runtime.AddCleanup(owner, func(fd int) { unix.Close(fd) }, fd)
	return &bodyFile{fd: fd, size: len(body)}
}

// sendBody sets a's body on c's response: by sendfile when a has a memfd
// and the connection came from sendfileListener, else from memory.
func sendBody(c *fiber.Ctx, a *Answer) error {
	if a.file != nil {
		if tc, ok := c.Context().Conn().(*sendfileConn); ok {
			// fasthttp serves one request of a connection at a time, so
			// the connection's one stream is free.
			tc.stream = fileStream{a: a, conn: tc}
			c.Context().Response.SetBodyStream(&tc.stream, a.file.size)
			return nil
		}
	}
	return c.Send(a.Body)
}

// sendfileListener wraps a listener's TCP connections in sendfileConn, so
// that large answers can be sent by sendfile.
type sendfileListener struct{ net.Listener }

// withSendfile returns ln, its TCP connections able to send large answers
// by sendfile.
func withSendfile(ln net.Listener) net.Listener { return sendfileListener{ln} }

func (l sendfileListener) Accept() (net.Conn, error) {
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
	sc := &sendfileConn{TCPConn: tc, raw: raw}
	sc.onWrite, sc.onRead = sc.sendStep, sc.readStep
	return sc, nil
}

// sendfileConn is an accepted TCP connection whose writes can be marked
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
type sendfileConn struct {
	*net.TCPConn
	raw    syscall.RawConn
	more   bool       // mark writes as followed by more data
	stream fileStream // the body stream of the response being sent

	onWrite, onRead func(fd uintptr) bool // sendStep and readStep

	// Deadlines as set (want) and as the poller holds them (armed).
	read, write deadline
	// The send in progress: buf or file, from off to end.
	buf      []byte
	file     *bodyFile
	off, end int64
	sent     int64
	err      error
	// The read in progress.
	rbuf []byte
	got  int
	rerr error
}

// deadline is a read or write deadline of a sendfileConn. fasthttp sets
// one to now plus its timeout up to three times a request; each would
// arm the poller's timer. Instead the deadline is noted, and armed only
// when a read or write is about to wait, or when the armed one would
// end a call the set one allows: a call that needs no wait never needed
// the deadline. Every call that waits, waits under the deadline last set,
// as with net.Conn.
type deadline struct {
	want, armed time.Time
}

// SetReadDeadline sets the deadline of future reads.
func (c *sendfileConn) SetReadDeadline(t time.Time) error {
	c.read.want = t
	return nil
}

// SetWriteDeadline sets the deadline of future writes.
func (c *sendfileConn) SetWriteDeadline(t time.Time) error {
	c.write.want = t
	return nil
}

// SetDeadline sets the deadline of future reads and writes.
func (c *sendfileConn) SetDeadline(t time.Time) error {
	c.read.want, c.write.want = t, t
	return nil
}

// early reports whether the armed deadline would refuse a call the set
// one allows: it must be armed again before the call.
func (d *deadline) early() bool {
	return !d.armed.IsZero() && !d.armed.Equal(d.want) && (d.want.IsZero() || d.armed.Before(d.want))
}

// arm gives the poller c's read or write deadline as set.
func (c *sendfileConn) arm(d *deadline) error {
	var err error
	if d == &c.read {
		err = c.TCPConn.SetReadDeadline(d.want)
	} else {
		err = c.TCPConn.SetWriteDeadline(d.want)
	}
	if err == nil {
		d.armed = d.want
	}
	return err
}

// Write writes p, with MSG_MORE while more is set.
func (c *sendfileConn) Write(p []byte) (int, error) {
	c.buf, c.file, c.off, c.end = p, nil, 0, int64(len(p))
	n, err := c.send()
	return int(n), err
}

// Read reads into p; it returns io.EOF once the peer has closed its side.
func (c *sendfileConn) Read(p []byte) (int, error) {
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
func (c *sendfileConn) readStep(fd uintptr) bool {
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
func (c *sendfileConn) waits(d *deadline, err *error) bool {
	if d.armed.Equal(d.want) {
		return false
	}
	if *err = c.arm(d); *err != nil {
		return true
	}
	return false
}

// sendFile sends f's bytes from off to its end.
func (c *sendfileConn) sendFile(f *bodyFile, off int64) (int64, error) {
	c.buf, c.file, c.off, c.end = nil, f, off, int64(f.size)
	return c.send()
}

// send runs the send set up in c's fields and returns the bytes sent.
func (c *sendfileConn) send() (int64, error) {
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

// sendStep sends from c's fields until done; false (wait in the poller
// and call again) when the socket is full.
func (c *sendfileConn) sendStep(fd uintptr) bool {
	for c.off < c.end {
		var n uintptr
		var errno syscall.Errno
		if c.file != nil {
			off := c.off
			n, _, errno = syscall.RawSyscall6(unix.SYS_SENDFILE, fd, uintptr(c.file.fd),
				uintptr(unsafe.Pointer(&off)), uintptr(c.end-c.off), 0, 0)
		} else {
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
		c.off += int64(n)
		c.sent += int64(n)
	}
	return true
}

// fileStream is the body stream of one response sent by sendfile. fasthttp
// calls WriteTo with its write buffer, which holds the headers.
type fileStream struct {
	a    *Answer // keeps the memfd open while the response is sent
	conn *sendfileConn
	off  int64
}

// WriteTo sends the headers marked as followed by more data, then the body
// from the memfd. A writer other than fasthttp's write buffer gets the
// bytes from memory.
func (s *fileStream) WriteTo(w io.Writer) (int64, error) {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		n, err := w.Write(s.a.Body[s.off:])
		s.off += int64(n)
		return int64(n), err
	}
	s.conn.more = true
	err := bw.Flush()
	s.conn.more = false
	if err != nil {
		return 0, err
	}
	n, err := s.conn.sendFile(s.a.file, s.off)
	s.off += n
	s.a = nil // sent: the connection keeps no answer alive
	return n, err
}

// Read makes the stream an io.Reader, as fasthttp requires; fasthttp
// sends it with WriteTo.
func (s *fileStream) Read(p []byte) (int, error) {
	if s.off >= int64(len(s.a.Body)) {
		return 0, io.EOF
	}
	n := copy(p, s.a.Body[s.off:])
	s.off += int64(n)
	return n, nil
}
