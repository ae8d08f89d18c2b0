package transport

import (
	"io"
	"net"
	"time"

	"github.com/valyala/fasthttp"
)

// A connection whose request was refused before its body or headers were
// read (413, 431) still has the client's bytes coming: closing it at once
// would make the kernel answer them with a reset, and a client still
// writing may then lose the refusal it was sent. Such a connection is
// closed gently instead ("lingering close", as Apache and nginx do): its
// sending side is shut down after the answer, and what the client still
// sends is read and dropped, for at most lingerTime and lingerBytes,
// before it is closed. At most maxLingering connections of a listener
// linger at once; past that one is closed at once.
const (
	lingerTime   = 5 * time.Second
	lingerBytes  = 64 << 20
	maxLingering = 256
)

// Linger marks the connection of ctx to be closed gently when fasthttp
// closes it (see lingerTime). Connections of a listener Listen did not
// wrap are closed as they would be.
func Linger(ctx *fasthttp.RequestCtx) {
	if l, ok := ctx.Conn().(lingerer); ok {
		l.lingerOnClose()
	}
}

type lingerer interface{ lingerOnClose() }

// lingerClose closes c gently (see Linger), taking a place in sem.
func lingerClose(c net.Conn, sem chan struct{}) error {
	select {
	case sem <- struct{}{}:
	default:
		return c.Close()
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		if err := cw.CloseWrite(); err != nil {
			<-sem
			return c.Close()
		}
	}
	go func() {
		defer func() { <-sem }()
		if c.SetReadDeadline(time.Now().Add(lingerTime)) == nil {
			io.CopyN(io.Discard, c, lingerBytes) //nolint:errcheck // the end or an error both mean: close
		}
		c.Close()
	}()
	return nil
}

// lingerListener wraps the connections of a listener that is not raw so
// that they can linger.
type lingerListener struct {
	net.Listener
	sem chan struct{}
}

func (l lingerListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return c, nil
	}
	return &lingerConn{TCPConn: tc, sem: l.sem}, nil
}

// lingerConn is a standard TCP connection that may linger on close.
type lingerConn struct {
	*net.TCPConn
	sem    chan struct{}
	linger bool
}

func (c *lingerConn) lingerOnClose() { c.linger = true }

// Close closes the connection, gently when it was marked to linger.
func (c *lingerConn) Close() error {
	if !c.linger {
		return c.TCPConn.Close()
	}
	return lingerClose(c.TCPConn, c.sem)
}
