//go:build !unix

package stream

import "net"

// hungUp cannot tell here: a stream's closed connection is seen at its
// next write (a heartbeat).
func hungUp(net.Conn) bool { return false }
