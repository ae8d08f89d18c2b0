package exports

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

// LatestDir is the directory, inside the exports' own, of the latest
// sets: for a day, each table whole as of the day's end (the listings as
// that day's file has them; every reading, change and review up to then),
// a file a table and store, named by LatestName. A set is published as a
// day is (written aside, renamed into place, manifest last) and never
// changes; the newest two are kept, so that a reader that began with the
// set before can finish with it.
const LatestDir = "latest"

// latestKept is how many latest sets are kept.
const latestKept = 2

// BuildLatest writes the latest set of day d (whose export must be
// there) into dir/latest/<d> from ClickHouse, unless it is there, and
// returns its manifest; built says whether this call wrote it.
func BuildLatest(ctx context.Context, conn driver.Conn, dir string, d views.Day) (m Manifest, built bool, err error) {
	day, err := readManifest(filepath.Join(dir, d.String()))
	if err != nil {
		return m, false, fmt.Errorf("latest of %s: the day's export: %w", d, err)
	}
	built, err = publish(filepath.Join(dir, LatestDir), d.String(), func(tmp string) (Manifest, error) {
		start := time.Now()
		m := Manifest{Day: d.String()}
		end := (d + 1).Time()
		for _, s := range views.Stores {
			files, err := writeLatestStore(ctx, conn, dir, tmp, day, s, d, end)
			if err != nil {
				return m, fmt.Errorf("latest %s of %s: %w", s, d, err)
			}
			m.Parquet = append(m.Parquet, files...)
		}
		schemas, err := writeSchemas(tmp)
		if err != nil {
			return m, fmt.Errorf("latest schemas of %s: %w", d, err)
		}
		m.Schemas = schemas
		m.Built, m.Seconds = time.Now().UTC().Truncate(time.Second), time.Since(start).Seconds()
		return m, nil
	})
	if err != nil {
		return m, false, err
	}
	m, err = readManifest(filepath.Join(dir, LatestDir, d.String()))
	return m, built, err
}

// writeLatestStore writes store s's files of the latest set of day d
// into tmp: the day's listings file linked (the same bytes), the rest
// read whole.
func writeLatestStore(ctx context.Context, conn driver.Conn, dir, tmp string, day Manifest, s views.Store, d views.Day, end time.Time) ([]File, error) {
	src, f, ok := parquetPath(dir, day, ParquetName(TableListings, s, d))
	if !ok {
		return nil, fmt.Errorf("the day's export has no listings file of %s", s)
	}
	f.Name = LatestName(TableListings, s)
	if err := linkOrCopy(src, filepath.Join(tmp, filepath.FromSlash(f.Name))); err != nil {
		return nil, err
	}
	parts, err := analytics.StoreParts(ctx, conn, s, lakePartSize)
	if err != nil {
		return nil, err
	}
	readings, err := writeReadings(ctx, conn, tmp, LatestName(TableReadings, s), s, parts, 0, d)
	if err != nil {
		return nil, err
	}
	chs, err := writeChanges(ctx, conn, tmp, LatestName(TableChanges, s), s, parts, time.Time{}, end)
	if err != nil {
		return nil, err
	}
	reviews, err := writeReviews(ctx, conn, tmp, LatestName(TableReviews, s), s, parts, time.Time{}, end)
	if err != nil {
		return nil, err
	}
	return []File{f, readings, chs, reviews}, nil
}

// linkOrCopy makes dst the same file as src: a hard link, or a copy
// where the file system has none.
func linkOrCopy(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if os.Link(src, dst) == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return errors.Join(err, out.Sync(), out.Close())
}

// publish writes a directory named name into parent unless it is there:
// fill writes its files into a temporary directory beside it and returns
// their manifest, written last; the directory is renamed into place.
// When another edge sharing parent published it first, the rename fails
// and what is there stays.
func publish(parent, name string, fill func(tmp string) (Manifest, error)) (bool, error) {
	final := filepath.Join(parent, name)
	if _, err := readManifest(final); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return false, fmt.Errorf("publish %s: %w", name, err)
	}
	tmp, err := os.MkdirTemp(parent, ".building-"+name+"-")
	if err != nil {
		return false, fmt.Errorf("publish %s: %w", name, err)
	}
	defer os.RemoveAll(tmp)
	m, err := fill(tmp)
	if err != nil {
		return false, err
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, manifestName), b, 0o644); err != nil {
		return false, fmt.Errorf("publish %s: %w", name, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return false, fmt.Errorf("publish %s: %w", name, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, rerr := readManifest(final); rerr == nil {
			return false, nil
		}
		return false, fmt.Errorf("publish %s: %w", name, err)
	}
	return true, nil
}

// Latest returns the manifests of the latest sets in dir, newest first.
func Latest(dir string) ([]Manifest, error) {
	return Days(filepath.Join(dir, LatestDir))
}

// PruneLatest removes the latest sets of dir but the newest two, and
// sets left by builds that did not finish.
func PruneLatest(dir string) error {
	sets, err := Latest(dir)
	if err != nil || len(sets) <= latestKept {
		return err
	}
	first, err := time.Parse(time.DateOnly, sets[latestKept-1].Day)
	if err != nil {
		return err
	}
	return Prune(filepath.Join(dir, LatestDir), views.DayOf(first))
}

// CopyLatest writes latest set m into dir from another edge's copy of it,
// as Copy writes a day: every file of the size and SHA-256 m gives, named
// as a latest set names them.
func CopyLatest(ctx context.Context, dir string, m Manifest, open func(ctx context.Context, name string) (io.ReadCloser, error)) (bool, error) {
	day, err := time.Parse(time.DateOnly, m.Day)
	if err != nil || views.DayOf(day).String() != m.Day {
		return false, fmt.Errorf("copy latest: day %q", m.Day)
	}
	if len(m.Files) > 0 {
		return false, fmt.Errorf("copy latest %s: a latest set has only Parquet files", m.Day)
	}
	if err := checkFiles(m.Parquet, latestNames()); err != nil {
		return false, fmt.Errorf("copy latest %s: %w", m.Day, err)
	}
	if err := checkFiles(m.Schemas, schemaNames()); err != nil {
		return false, fmt.Errorf("copy latest %s: %w", m.Day, err)
	}
	return publish(filepath.Join(dir, LatestDir), m.Day, func(tmp string) (Manifest, error) {
		for _, f := range m.lake() {
			if err := copyFile(ctx, filepath.Join(tmp, filepath.FromSlash(f.Name)), f, open); err != nil {
				return m, fmt.Errorf("copy latest %s: %w", m.Day, err)
			}
		}
		return m, nil
	})
}

// latestNames are the names a latest set may hold.
func latestNames() map[string]bool {
	allowed := map[string]bool{}
	for _, s := range views.Stores {
		for _, t := range Tables {
			allowed[LatestName(t, s)] = true
		}
	}
	return allowed
}

// parquetPath returns the path of m's Parquet file name in dir (m a day
// or, with dir the latest sets', a set), when m lists it.
func parquetPath(dir string, m Manifest, name string) (string, File, bool) {
	files := m.lake()
	i := slices.IndexFunc(files, func(f File) bool { return f.Name == name })
	if i < 0 || strings.Contains(name, "..") {
		return "", File{}, false
	}
	return filepath.Join(dir, m.Day, filepath.FromSlash(name)), files[i], true
}
