package transport

import (
	"net"

	"github.com/valyala/fasthttp"
)

// Listen wraps ln so that its TCP connections use the raw path when raw is
// true (and the system has it), and can linger on close (see Linger)
// either way.
func Listen(ln net.Listener, raw bool) net.Listener {
	sem := make(chan struct{}, maxLingering)
	if !raw || !rawSupported {
		return lingerListener{ln, sem}
	}
	return rawListener{ln, sem}
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
