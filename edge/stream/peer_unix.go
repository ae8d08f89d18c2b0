//go:build unix

package stream

import (
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// hungUp reports whether the client closed its side of conn: a peek at
// the socket, which neither waits nor takes a byte, reads its end. False
// when it cannot tell (a connection without a socket, such as a pipe).
func hungUp(conn net.Conn) bool {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	var closed bool
	var b [1]byte
	raw.Control(func(fd uintptr) {
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		closed = n == 0 && err == nil || err == unix.ECONNRESET
	})
	return closed
}
