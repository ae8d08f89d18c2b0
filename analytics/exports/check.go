package exports

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Stamp identifies a file's bytes as the file system last wrote them:
// a file checked once (Check) is taken as checked while its stamp holds,
// so a file is hashed once, not once per answer. Besides the size and
// the time of writing, which a copy can keep (cp -p, touch -r), it holds
// the inode and the time of its last change, which no write keeps
// (Linux; 0 elsewhere).
type Stamp struct {
	Size    int64
	ModTime int64 // nanoseconds
	Inode   uint64
	Changed int64 // the inode's change time, nanoseconds
}

// StampOf returns the stamp of the file at path.
func StampOf(path string) (Stamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return Stamp{}, err
	}
	st := Stamp{Size: fi.Size(), ModTime: fi.ModTime().UnixNano()}
	st.Inode, st.Changed = inodeOf(fi)
	return st, nil
}

// Check reads the file at path whole and returns its stamp, or an error
// when its size or SHA-256 is not f's (a file truncated, or damaged on
// disk: never served).
func Check(path string, f File) (Stamp, error) {
	st, err := StampOf(path)
	if err != nil {
		return st, err
	}
	if st.Size != f.Size {
		return st, fmt.Errorf("%s: %d bytes, the manifest says %d", f.Name, st.Size, f.Size)
	}
	in, err := os.Open(path)
	if err != nil {
		return st, err
	}
	defer in.Close()
	h := sha256.New()
	if _, err := io.Copy(h, in); err != nil {
		return st, fmt.Errorf("%s: %w", f.Name, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); sum != f.SHA256 {
		return st, fmt.Errorf("%s: SHA-256 %s, the manifest says %s", f.Name, sum, f.SHA256)
	}
	return st, nil
}

// Quarantine moves the published directory dayDir (a day, or a latest
// set) aside, so that it is no longer listed and the next run builds or
// copies it again; Prune removes it an hour later.
func Quarantine(dayDir string) error {
	aside := filepath.Join(filepath.Dir(dayDir), ".building-damaged-"+filepath.Base(dayDir)+"-"+fmt.Sprint(time.Now().UnixNano()))
	if err := os.Rename(dayDir, aside); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("quarantine %s: %w", dayDir, err)
	}
	return nil
}

// Files returns every file m lists with its path, m a day of dir or,
// with latest, a latest set of dir.
func Files(dir string, m Manifest, latest bool) map[string]File {
	base := filepath.Join(dir, m.Day)
	if latest {
		base = filepath.Join(dir, LatestDir, m.Day)
	}
	out := map[string]File{}
	for _, list := range [][]File{m.Files, m.Parquet, m.Schemas} {
		for _, f := range list {
			if !strings.Contains(f.Name, "..") {
				out[filepath.Join(base, filepath.FromSlash(f.Name))] = f
			}
		}
	}
	return out
}
