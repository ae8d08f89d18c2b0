//go:build linux && (amd64 || arm64)

package transport

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// MinFileSize is the smallest body worth a memfd and sendfile(2). Below
// it, writing the bytes from memory costs less than the memfd's copy of
// them (bench/README.md#the-cached-hot-path).
const MinFileSize = 32 << 10

// MinStreamSize is the smallest body sent as a stream of its own: the
// headers flushed as followed by more data (MSG_MORE), then the body in
// one write from where it lies. Through fasthttp's 4 KiB write buffer, a
// body of a few kilobytes would be copied in part into the buffer and
// leave in two pushes: a 12 KB gzip answer ran at 0.74x nginx's rate that
// way, at 1.0x as a stream (bench/README.md, Compression). Smaller bodies
// fit the buffer with their headers and leave in one write.
const MinStreamSize = 4 << 10

// rawSupported says the raw connections exist on this system.
const rawSupported = true

// File is a body in an anonymous in-memory file (memfd), sealed so that
// its bytes never change under a response. Each response sends them with
// sendfile(2) at an explicit offset, so the kernel copies from its own
// pages instead of every request copying the body from user space, as
// nginx does with a static file. Responses share one File: sendfile with
// an offset does not move the file's position. The memfd is closed once
// the File is unreachable.
type File struct {
	fd   int
	body []byte // the same bytes, for writers that are not a raw connection
}

// NewFile returns body in a sealed memfd, sent by sendfile; a body under
// MinFileSize, or when the kernel offers no memfd or seals, is sent as a
// stream from memory instead; nil under MinStreamSize (the body goes
// through the write buffer). body must not change afterwards.
func NewFile(body []byte) *File {
	if len(body) < MinStreamSize {
		return nil
	}
	inMemory := &File{fd: -1, body: body}
	if len(body) < MinFileSize {
		return inMemory
	}
	fd, err := unix.MemfdCreate("edge-answer", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return inMemory
	}
	for b := body; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			unix.Close(fd)
			return inMemory
		}
		b = b[n:]
	}
	// Unsealed, the bytes could change under a response: then do not use
	// the file at all.
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE|unix.F_SEAL_SEAL); err != nil {
		unix.Close(fd)
		return inMemory
	}
	// Without access times, a send does not update the file's.
	if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0); err == nil {
		unix.FcntlInt(uintptr(fd), unix.F_SETFL, fl|unix.O_NOATIME)
	}
	f := &File{fd: fd, body: body}
	runtime.AddCleanup(f, func(fd int) { unix.Close(fd) }, fd)
	return f
}

// NewStream returns body to be sent as a stream of its own from memory,
// never in a memfd (nil under MinStreamSize): for a body unlikely to be
// sent twice, which is not worth a file descriptor and a second copy.
func NewStream(body []byte) *File {
	if len(body) < MinStreamSize {
		return nil
	}
	return &File{fd: -1, body: body}
}

// Size returns the number of bytes in f.
func (f *File) Size() int { return len(f.body) }

// Memfd reports whether f's bytes are also in a memfd (sent by sendfile),
// where they take memory a second time; false: they are sent from where
// they lie in memory.
func (f *File) Memfd() bool { return f.fd >= 0 }
