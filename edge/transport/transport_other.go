//go:build !(linux && (amd64 || arm64))

package transport

import (
	"math"
	"net"

	"github.com/valyala/fasthttp"
)

// MinFileSize is the smallest body sent with sendfile on Linux (amd64 and
// arm64); elsewhere every answer is sent from memory.
const MinFileSize = math.MaxInt

// MinStreamSize is the smallest body sent as a stream of its own on Linux
// (amd64 and arm64).
const MinStreamSize = math.MaxInt

// rawSupported says the raw connections exist on this system: only on
// Linux (amd64 and arm64).
const rawSupported = false

// File is a large body in a file the kernel sends from; only on Linux
// (amd64 and arm64).
type File struct{ body []byte }

// NewFile returns nil: only Linux (amd64 and arm64) sends bodies from
// files.
func NewFile([]byte) *File { return nil }

// NewStream returns nil: only Linux (amd64 and arm64) sends bodies as
// streams of their own.
func NewStream([]byte) *File { return nil }

// Size returns the number of bytes in f.
func (f *File) Size() int { return len(f.body) }

// Memfd reports whether f's bytes are also in a memfd: never here.
func (f *File) Memfd() bool { return false }

type rawListener struct {
	net.Listener
	sem  chan struct{}
	opts Options
	live *liveConns
}

// liveConns has no connection to drain here: no connection answers on the
// replay path.
type liveConns struct{}

func newLiveConns() *liveConns { return &liveConns{} }

func (*liveConns) drain() {}

func sendFile(*fasthttp.RequestCtx, *File) bool { return false }

func candidate(*fasthttp.RequestCtx) []byte { return nil }

func note(*fasthttp.RequestCtx) *any { return nil }
