package exports

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/edge-stats/edge/views"
)

// Days returns the manifests of the days exported in dir, newest first.
// Directories being built, and anything else, are not listed.
func Days(dir string) ([]Manifest, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list exports: %w", err)
	}
	var out []Manifest
	for _, e := range entries {
		if _, err := time.Parse(time.DateOnly, e.Name()); err != nil || !e.IsDir() {
			continue
		}
		m, err := readManifest(filepath.Join(dir, e.Name()))
		if err != nil {
			continue // not published (or damaged): not served
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Manifest) int { return strings.Compare(b.Day, a.Day) })
	return out, nil
}

// Prune removes the days of dir before day first, and directories left
// by builds that did not finish more than an hour ago.
func Prune(dir string, first views.Day) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("prune exports: %w", err)
	}
	var errs []error
	for _, e := range entries {
		path := filepath.Join(dir, e.Name())
		if t, err := time.Parse(time.DateOnly, e.Name()); err == nil && views.DayOf(t) < first {
			errs = append(errs, os.RemoveAll(path))
			continue
		}
		if strings.HasPrefix(e.Name(), ".building-") {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > time.Hour {
				errs = append(errs, os.RemoveAll(path))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("prune exports: %w", err)
	}
	return nil
}

// Path returns the path of file name of day in dir, when the day's
// manifest m lists it; ok is false for anything else, so that a request
// names only files the manifest lists (no path is built from its text).
func Path(dir string, m Manifest, name string) (string, File, bool) {
	for _, f := range m.Files {
		if f.Name == name {
			return filepath.Join(dir, m.Day, f.Name), f, true
		}
	}
	return parquetPath(dir, m, name)
}

// LatestPath returns the path of file name of latest set m in dir, as
// Path does for a day.
func LatestPath(dir string, m Manifest, name string) (string, File, bool) {
	return parquetPath(filepath.Join(dir, LatestDir), m, name)
}

// Copy writes day m.Day into dir from another edge's copy of it (a
// fleet's leader), unless it is there already: open returns each file's
// bytes by name. Every file must have the size and SHA-256 m gives, and
// m may name only the files an export has, so a copy is the same bytes as
// a build, or not there at all. It is published as Build publishes, by
// a rename; copied says whether this call wrote it.
func Copy(ctx context.Context, dir string, m Manifest, open func(ctx context.Context, name string) (io.ReadCloser, error)) (copied bool, err error) {
	day, err := time.Parse(time.DateOnly, m.Day)
	if err != nil || views.DayOf(day).String() != m.Day {
		return false, fmt.Errorf("copy export: day %q", m.Day)
	}
	if err := checkNames(m); err != nil {
		return false, fmt.Errorf("copy export %s: %w", m.Day, err)
	}
	return publish(dir, m.Day, func(tmp string) (Manifest, error) {
		for _, f := range append(slices.Clip(m.Files), m.lake()...) {
			if err := copyFile(ctx, filepath.Join(tmp, filepath.FromSlash(f.Name)), f, open); err != nil {
				return m, fmt.Errorf("copy export %s: %w", m.Day, err)
			}
		}
		return m, nil
	})
}

// checkNames reports an error unless m names each file a day's export
// has at most once, and no other (a name from another edge never becomes
// a path unchecked).
func checkNames(m Manifest) error {
	allowed := map[string]bool{}
	for _, s := range views.Stores {
		for _, format := range formats {
			allowed[fileName(s, format)] = true
		}
		allowed[eventsName(s)] = true
	}
	if err := checkFiles(m.Files, allowed); err != nil {
		return err
	}
	day, _ := time.Parse(time.DateOnly, m.Day)
	lakeNames := map[string]bool{}
	for _, s := range views.Stores {
		for _, t := range Tables {
			lakeNames[ParquetName(t, s, views.DayOf(day))] = true
		}
	}
	if err := checkFiles(m.Parquet, lakeNames); err != nil {
		return err
	}
	return checkFiles(m.Schemas, schemaNames())
}

// checkFiles reports an error unless files name only names allowed, each
// at most once, each with a size and a SHA-256.
func checkFiles(files []File, allowed map[string]bool) error {
	for _, f := range files {
		if !allowed[f.Name] {
			return fmt.Errorf("file %q is not one an export has, or is listed twice", f.Name)
		}
		allowed[f.Name] = false
		if f.Size < 0 || len(f.SHA256) != 2*sha256.Size {
			return fmt.Errorf("file %s: size %d, SHA-256 %q", f.Name, f.Size, f.SHA256)
		}
	}
	return nil
}

// copyFile writes f from open to path, checking its size and SHA-256.
func copyFile(ctx context.Context, path string, f File, open func(ctx context.Context, name string) (io.ReadCloser, error)) error {
	src, err := open(ctx, f.Name)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(out, h), io.LimitReader(src, f.Size+1))
	if err != nil {
		return fmt.Errorf("%s: %w", f.Name, err)
	}
	if sum := hex.EncodeToString(h.Sum(nil)); n != f.Size || sum != f.SHA256 {
		return fmt.Errorf("%s: %d bytes with SHA-256 %s, the manifest says %d and %s", f.Name, n, sum, f.Size, f.SHA256)
	}
	return out.Close()
}
