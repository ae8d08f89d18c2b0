//go:build linux

package main

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// newMemfd returns a memfd holding body.
func newMemfd(body []byte) (int, error) {
	fd, err := unix.MemfdCreate("floor", unix.MFD_CLOEXEC)
	if err != nil {
		return -1, err
	}
	if _, err := unix.Write(fd, body); err != nil {
		return -1, err
	}
	return fd, nil
}

// sendFile sends f's 200 headers marked as followed by more data, then
// its body by sendfile from its memfd. The callback runs again, after a
// wait in the poller, while the socket is full.
func sendFile(rc syscall.RawConn, f *file) error {
	var serr error
	sentHeaders, off := false, int64(0)
	err := rc.Write(func(fd uintptr) bool {
		if !sentHeaders {
			_, _, errno := syscall.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&f.ok[0])), uintptr(len(f.ok)), unix.MSG_MORE|unix.MSG_NOSIGNAL, 0, 0)
			if errno == unix.EAGAIN {
				return false
			}
			if errno != 0 {
				serr = errno
				return true
			}
			sentHeaders = true
		}
		for off < int64(len(f.body)) {
			_, err := unix.Sendfile(int(fd), f.memfd, &off, len(f.body)-int(off))
			if err == unix.EAGAIN {
				return false
			}
			if err != nil {
				serr = err
				return true
			}
		}
		return true
	})
	if err != nil {
		return err
	}
	return serr
}
