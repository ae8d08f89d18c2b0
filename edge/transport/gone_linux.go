//go:build linux

package transport

import (
	"errors"
	"net"
	"syscall"

	"github.com/valyala/fasthttp"
	"golang.org/x/sys/unix"
)

// Gone reports whether the client of ctx has left while its request is
// computed: its connection's end has reached the socket (it closed or
// reset it). It peeks at the socket without waiting or taking anything
// from it, so a request the client sent after this one is still read; a
// connection that is not TCP is never taken to be gone. Work that costs
// more than an answer needs (a fruitless search's suggestions) asks it
// between its steps, as fasthttp cancels nothing when a client leaves.
func Gone(ctx *fasthttp.RequestCtx) bool { return connGone(ctx.Conn()) }

// connGone is Gone for the connection c.
func connGone(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	gone := false
	var b [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, err := unix.Recvfrom(int(fd), b[:], unix.MSG_PEEK|unix.MSG_DONTWAIT)
		gone = (n == 0 && err == nil) || (err != nil && !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR))
		return true // never wait for the poller
	})
	return gone || err != nil
}
