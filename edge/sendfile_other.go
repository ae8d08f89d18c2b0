//go:build !(linux && (amd64 || arm64))

package edge

import (
	"math"
	"net"

	"github.com/gofiber/fiber/v2"
)

// sendfileMin is the smallest body sent with sendfile on Linux (amd64 and
// arm64); elsewhere every answer is sent from memory.
const sendfileMin = math.MaxInt

// bodyFile is a large answer's bytes in a file the kernel sends from; only
// on Linux (amd64 and arm64).
type bodyFile struct{ size int }

func newBodyFile(*Answer, []byte) *bodyFile { return nil }

// sendBody sets a's body on c's response.
func sendBody(c *fiber.Ctx, a *Answer) error { return c.Send(a.Body) }

// withSendfile returns ln: only Linux (amd64 and arm64) sends answers by
// sendfile.
func withSendfile(ln net.Listener) net.Listener { return ln }
