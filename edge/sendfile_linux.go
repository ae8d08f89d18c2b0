//go:build linux

package edge

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
// and the connection is a TCP socket, else from memory.
func sendBody(c *fiber.Ctx, a *Answer) error {
	if a.file != nil {
		if sc, ok := c.Context().Conn().(syscall.Conn); ok {
			if rc, err := sc.SyscallConn(); err == nil {
				c.Context().Response.SetBodyStream(&fileStream{a: a, conn: rc}, a.file.size)
				return nil
			}
		}
	}
	return c.Send(a.Body)
}

// fileStream is the body stream of one response sent by sendfile. fasthttp
// calls WriteTo with its write buffer, which holds the headers.
type fileStream struct {
	a    *Answer // keeps the memfd open while the response is sent
	conn syscall.RawConn
	off  int64
}

// WriteTo flushes the headers, then sends the body from the memfd,
// waiting in the network poller whenever the socket is full (so the
// connection's write deadline applies). A writer other than fasthttp's
// write buffer gets the bytes from memory.
func (s *fileStream) WriteTo(w io.Writer) (int64, error) {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		n, err := w.Write(s.a.Body[s.off:])
		s.off += int64(n)
		return int64(n), err
	}
	// Corked, the headers wait for the body: the client gets whole
	// segments, not a small one for the headers and then the body (as
	// nginx's tcp_nopush does).
	cork := func(on int) {
		s.conn.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_CORK, on) })
	}
	cork(1)
	defer cork(0)
	if err := bw.Flush(); err != nil {
		return 0, err
	}
	var sent int64
	var opErr error
	err := s.conn.Write(func(fd uintptr) bool {
		for s.off < int64(s.a.file.size) {
			n, err := unix.Sendfile(int(fd), s.a.file.fd, &s.off, s.a.file.size-int(s.off))
			sent += int64(max(n, 0))
			switch {
			case errors.Is(err, unix.EAGAIN):
				return false // wait until the socket can take more
			case errors.Is(err, unix.EINTR):
				continue
			case err != nil:
				opErr = fmt.Errorf("sendfile: %w", err)
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
