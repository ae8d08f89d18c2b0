//go:build linux

package edge

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"syscall"

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
	runtime.AddCleanup(owner, func(fd int) { unix.Close(fd) }, fd)
	return &bodyFile{fd: fd, size: len(body)}
}

// sendBody sets a's body on c's response: by sendfile when a has a memfd
// and the connection came from sendfileListener, else from memory.
func sendBody(c *fiber.Ctx, a *Answer) error {
	if a.file != nil {
		if tc, ok := c.Context().Conn().(*sendfileConn); ok {
			c.Context().Response.SetBodyStream(&fileStream{a: a, conn: tc}, a.file.size)
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
	return &sendfileConn{TCPConn: tc, raw: raw}, nil
}

// sendfileConn is an accepted TCP connection whose writes can be marked
// as followed by more data (MSG_MORE): a response's headers then wait in
// the socket for its body, sent by sendfile, and leave with it in whole
// segments, as nginx's tcp_nopush does, without the two setsockopt calls
// of TCP_CORK. fasthttp serves one request of a connection at a time, so
// more needs no lock.
type sendfileConn struct {
	*net.TCPConn
	raw  syscall.RawConn
	more bool
}

// Write writes p, with MSG_MORE while more is set.
func (c *sendfileConn) Write(p []byte) (int, error) {
	if !c.more {
		return c.TCPConn.Write(p)
	}
	var n int
	err := sendAll(c.raw, "send", func() bool { return n < len(p) }, func(fd int) (int, error) {
		m, err := unix.SendmsgN(fd, p[n:], nil, nil, unix.MSG_MORE|unix.MSG_NOSIGNAL)
		n += max(m, 0)
		return m, err
	})
	return n, err
}

// sendAll calls send with the socket's descriptor while more reports bytes
// left, waiting in the network poller whenever the socket is full (so the
// connection's write deadline applies). what names the call in errors.
func sendAll(raw syscall.RawConn, what string, more func() bool, send func(fd int) (int, error)) error {
	var opErr error
	err := raw.Write(func(fd uintptr) bool {
		for more() {
			n, err := send(int(fd))
			switch {
			case errors.Is(err, unix.EAGAIN):
				return false // wait until the socket can take more
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				opErr = fmt.Errorf("%s: %w", what, err)
				return true
			case n == 0:
				opErr = io.ErrUnexpectedEOF
				return true
			}
		}
		return true
	})
	if err == nil {
		err = opErr
	}
	return err
}

// fileStream is the body stream of one response sent by sendfile. fasthttp
// calls WriteTo with its write buffer, which holds the headers.
type fileStream struct {
	a    *Answer // keeps the memfd open while the response is sent
	conn *sendfileConn
	off  int64
}

// WriteTo sends the headers marked as followed by more data, then the body
// from the memfd, waiting in the network poller whenever the socket is
// full (so the connection's write deadline applies). A writer other than
// fasthttp's write buffer gets the bytes from memory.
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
	var sent int64
	size := int64(s.a.file.size)
	err = sendAll(s.conn.raw, "sendfile", func() bool { return s.off < size }, func(fd int) (int, error) {
		n, err := unix.Sendfile(fd, s.a.file.fd, &s.off, int(size-s.off))
		sent += int64(max(n, 0))
		return n, err
	})
	return sent, err
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
