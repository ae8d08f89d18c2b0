package exports

import (
	"io/fs"
	"syscall"
)

// inodeOf returns fi's inode and the time of its last change.
func inodeOf(fi fs.FileInfo) (uint64, int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ino, st.Ctim.Nano()
	}
	return 0, 0
}
