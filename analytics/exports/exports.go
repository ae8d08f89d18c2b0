// Package exports builds and keeps the daily bulk exports: for each UTC
// day once it has closed, and each store, every listing's state at the
// day's end and the day's readings, as gzip-compressed NDJSON and CSV
// files in a directory. A day's files are written into a directory of
// their own and published by renaming it into place, with a manifest
// (each file's size, rows and SHA-256) written last: a day is there whole
// or not at all, and its files never change. The bytes depend only on
// the data, so edges that build the same day apart write the same files;
// edges that share the directory build each day once (see Build).
package exports

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/klauspost/compress/gzip"

	"github.com/edge-stats/edge/views"
)

// File is one file of a day's export or of a latest set.
type File struct {
	Name    string `json:"name"`            // <store>.ndjson.gz, <store>.csv.gz, <store>.events.ndjson.gz, or a lake file's path (ParquetName, LatestName, SchemaName)
	Store   string `json:"store,omitempty"` // none on a schema file
	Content string `json:"content"`         // listings, events (the day's changes), or a lake table
	Format  string `json:"format"`          // ndjson, csv, parquet or schema
	Size    int64  `json:"size"`            // bytes, as served
	Rows    int    `json:"rows"`            // listings, events, a table's rows, or a schema's columns
	SHA256  string `json:"sha256"`          // of the bytes served, in hex
}

// The contents of a day's files.
const (
	ContentListings = "listings"
	ContentEvents   = "events"
)

// Manifest lists a day's files.
type Manifest struct {
	Day     string    `json:"day"`
	Built   time.Time `json:"built"`   // when the files were written
	Seconds float64   `json:"seconds"` // how long building took
	Files   []File    `json:"files"`
	// Parquet lists the day's lake files (package lake): a file a table
	// and store, named by ParquetName. A release before the lake reads
	// no such field, so the files it copies from a fleet's leader are
	// the others, and the day it serves has no lake.
	Parquet []File `json:"parquet,omitempty"`
	// Schemas lists the lake's schema files (lake.Schema), one a table,
	// named by SchemaName. A release before them reads no such field.
	Schemas []File `json:"schemas,omitempty"`
}

// lake returns m's lake files: its Parquet files and their schemas.
func (m Manifest) lake() []File { return append(slices.Clip(m.Parquet), m.Schemas...) }

const manifestName = "manifest.json"

// formats are the formats of each store's files, in manifest order.
var formats = []string{"ndjson", "csv"}

// eventsName returns the name of store s's events file.
func eventsName(s views.Store) string { return s.String() + ".events.ndjson.gz" }

// fileName returns the name of store s's file in format.
func fileName(s views.Store, format string) string { return s.String() + "." + format + ".gz" }

// Build writes day d's export into dir/<d> from ClickHouse, unless it is
// there already, and returns its manifest; built says whether this call
// wrote it. Files are written under a temporary name in dir and renamed
// into place: when another edge sharing dir published the day first, the
// rename fails, this call's files are removed, and the day already there
// is returned.
func Build(ctx context.Context, conn driver.Conn, dir string, d views.Day) (m Manifest, built bool, err error) {
	built, err = publish(dir, d.String(), func(tmp string) (Manifest, error) {
		start := time.Now()
		m := Manifest{Day: d.String()}
		for _, s := range views.Stores {
			files, err := writeStore(ctx, conn, tmp, s, d)
			if err != nil {
				return m, fmt.Errorf("export %s of %s: %w", s, d, err)
			}
			events, err := writeEvents(ctx, conn, tmp, s, d)
			if err != nil {
				return m, fmt.Errorf("export the events of %s of %s: %w", s, d, err)
			}
			m.Files = append(append(m.Files, files[:len(formats)]...), events)
			tables, err := writeDayTables(ctx, conn, tmp, s, d)
			if err != nil {
				return m, fmt.Errorf("export the lake of %s of %s: %w", s, d, err)
			}
			m.Parquet = append(append(m.Parquet, files[len(formats):]...), tables...)
		}
		schemas, err := writeSchemas(tmp)
		if err != nil {
			return m, fmt.Errorf("export the lake's schemas of %s: %w", d, err)
		}
		m.Schemas = schemas
		m.Built, m.Seconds = time.Now().UTC().Truncate(time.Second), time.Since(start).Seconds()
		return m, nil
	})
	if err != nil {
		return m, false, err
	}
	m, err = readManifest(filepath.Join(dir, d.String()))
	return m, built, err
}

// readManifest reads the manifest of a day's directory.
func readManifest(dayDir string) (Manifest, error) {
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dayDir, manifestName))
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("manifest of %s: %w", dayDir, err)
	}
	for i := range m.Files {
		if m.Files[i].Content == "" {
			m.Files[i].Content = ContentListings // written before the events files
		}
	}
	return m, nil
}

// counted is a writer that hashes and counts what goes through it.
type counted struct {
	w    io.Writer
	n    int64
	hash io.Writer
}

func (c *counted) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.hash.Write(p[:n])
	return n, err
}

// output is one file being written: gzip over a hashing counter over a
// buffered file.
type output struct {
	f    *os.File
	buf  *bufio.Writer
	cnt  *counted
	sum  interface{ Sum([]byte) []byte }
	gz   *gzip.Writer
	file File
}

func create(dir string, s views.Store, format string) (*output, error) {
	return createNamed(dir, fileName(s, format), s, ContentListings, format)
}

func createNamed(dir, name string, s views.Store, content, format string) (*output, error) {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	o := &output{f: f, buf: bufio.NewWriterSize(f, 1<<20), sum: h, file: File{Name: name, Store: s.String(), Content: content, Format: format}}
	o.cnt = &counted{w: o.buf, hash: h}
	// No name and no time in the header: the bytes depend on the data alone.
	o.gz, _ = gzip.NewWriterLevel(o.cnt, gzip.DefaultCompression)
	return o, nil
}

func (o *output) close() (File, error) {
	err := errors.Join(o.gz.Close(), o.buf.Flush(), o.f.Sync(), o.f.Close())
	o.file.Size, o.file.SHA256 = o.cnt.n, hex.EncodeToString(o.sum.Sum(nil))
	return o.file, err
}

// csvHeader is the header row of the CSV files.
var csvHeader = []string{"store", "id", "slug", "name", "developer", "category", "kind", "version", "updated", "created",
	"first_seen", "delisted_at", "metadata_at", "read_at", "size", "usage", "weekly_downloads", "rating", "rating_count", "day_readings"}
