package transport

import (
	"net"

	"github.com/valyala/fasthttp"
)

// Listen wraps ln so that its TCP connections use the raw path when raw is
// true (and the system has it); otherwise it returns ln unchanged.
func Listen(ln net.Listener, raw bool) net.Listener {
	if !raw || !rawSupported {
		return ln
	}
	return rawListener{ln}
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
