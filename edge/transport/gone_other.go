//go:build !linux

package transport

import (
	"net"

	"github.com/valyala/fasthttp"
)

// Gone reports whether the client of ctx has left while its request is
// computed; only Linux tells, elsewhere it never has.
func Gone(ctx *fasthttp.RequestCtx) bool { return connGone(ctx.Conn()) }

func connGone(net.Conn) bool { return false }
