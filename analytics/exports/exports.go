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
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"
	"github.com/klauspost/compress/gzip"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// File is one file of a day's export.
type File struct {
	Name    string `json:"name"` // <store>.ndjson.gz, <store>.csv.gz or <store>.events.ndjson.gz
	Store   string `json:"store"`
	Content string `json:"content"` // listings, or events (the day's changes)
	Format  string `json:"format"`  // ndjson or csv
	Size    int64  `json:"size"`    // bytes, compressed
	Rows    int    `json:"rows"`    // listings, or events
	SHA256  string `json:"sha256"`  // of the compressed bytes, in hex
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
}

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
	final := filepath.Join(dir, d.String())
	if m, err := readManifest(final); err == nil {
		return m, false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return m, false, fmt.Errorf("export %s: %w", d, err)
	}
	tmp, err := os.MkdirTemp(dir, ".building-"+d.String()+"-")
	if err != nil {
		return m, false, fmt.Errorf("export %s: %w", d, err)
	}
	defer os.RemoveAll(tmp) // nothing left once renamed
	start := time.Now()
	m = Manifest{Day: d.String()}
	for _, s := range views.Stores {
		files, err := writeStore(ctx, conn, tmp, s, d)
		if err != nil {
			return m, false, fmt.Errorf("export %s of %s: %w", s, d, err)
		}
		events, err := writeEvents(ctx, conn, tmp, s, d)
		if err != nil {
			return m, false, fmt.Errorf("export the events of %s of %s: %w", s, d, err)
		}
		m.Files = append(append(m.Files, files...), events)
	}
	m.Built, m.Seconds = time.Now().UTC().Truncate(time.Second), time.Since(start).Seconds()
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, manifestName), b, 0o644); err != nil {
		return m, false, fmt.Errorf("export %s: %w", d, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return m, false, fmt.Errorf("export %s: %w", d, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if other, rerr := readManifest(final); rerr == nil {
			return other, false, nil // another edge published it first
		}
		return m, false, fmt.Errorf("export %s: %w", d, err)
	}
	return m, true, nil
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

// writeStore writes store s's files of day d into dir.
func writeStore(ctx context.Context, conn driver.Conn, dir string, s views.Store, d views.Day) ([]File, error) {
	nd, err := create(dir, s, "ndjson")
	if err != nil {
		return nil, err
	}
	defer nd.f.Close()
	cs, err := create(dir, s, "csv")
	if err != nil {
		return nil, err
	}
	defer cs.f.Close()
	cw := csv.NewWriter(cs.gz)
	cw.UseCRLF = true
	cs.gz.Write([]byte("\ufeff"))
	cw.Write(csvHeader)
	enc := json.NewEncoder(nd.gz)
	rows := 0
	err = analytics.StreamExportRows(ctx, conn, s, d, func(r *analytics.ExportRow) error {
		rows++
		doc := document(r)
		if err := enc.Encode(&doc); err != nil {
			return err
		}
		return cw.Write(record(&doc, len(r.Readings)))
	})
	if err != nil {
		return nil, err
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return nil, err
	}
	var files []File
	for _, o := range []*output{nd, cs} {
		f, err := o.close()
		if err != nil {
			return nil, err
		}
		f.Rows = rows
		files = append(files, f)
	}
	return files, nil
}

// event is a line of a day's events file: a change of a listing, as
// GET /api/v1/events gives it, with the listing's name in the version
// that holds it.
type event struct {
	At      time.Time `json:"at"`
	Store   string    `json:"store"`
	ID      string    `json:"id"`
	Name    string    `json:"name"`
	Kind    string    `json:"kind"`
	Before  *string   `json:"before"`
	After   *string   `json:"after"`
	Added   []string  `json:"added"`
	Removed []string  `json:"removed"`
	Widened *bool     `json:"widened"`
}

// writeEvents writes store s's events of day d into dir: every change of
// a listing seen by a crawl of that day, one a line.
func writeEvents(ctx context.Context, conn driver.Conn, dir string, s views.Store, d views.Day) (File, error) {
	o, err := createNamed(dir, eventsName(s), s, ContentEvents, "ndjson")
	if err != nil {
		return File{}, err
	}
	defer o.f.Close()
	enc := json.NewEncoder(o.gz)
	rows := 0
	err = analytics.StreamDayChanges(ctx, conn, s, d, func(c *analytics.DayChange) error {
		rows++
		e := event{At: time.Unix(c.At, 0).UTC(), Store: s.String(), ID: c.ID, Name: c.Name, Kind: c.Kind.String()}
		switch c.Kind {
		case changes.Permissions, changes.HostAccess:
			e.Added, e.Removed = append([]string{}, c.Added()...), append([]string{}, c.Removed()...)
			if c.Kind == changes.HostAccess {
				e.Widened = &c.Widened
			}
		default:
			if c.Before != "" {
				e.Before = &c.Before
			}
			if c.After != "" {
				e.After = &c.After
			}
		}
		return enc.Encode(&e)
	})
	if err != nil {
		return File{}, err
	}
	f, err := o.close()
	f.Rows = rows
	return f, err
}

// reading is a reading in an NDJSON line.
type reading struct {
	ReadAt          time.Time `json:"readAt"`
	Size            *uint64   `json:"size"`
	Usage           *uint64   `json:"usage"`
	WeeklyDownloads *uint64   `json:"weeklyDownloads"`
	Rating          *float64  `json:"rating"`
	RatingCount     *uint64   `json:"ratingCount"`
}

// line is one listing in an NDJSON file.
type line struct {
	Store      string     `json:"store"`
	ID         string     `json:"id"`
	Slug       *string    `json:"slug"`
	Name       string     `json:"name"`
	Developer  string     `json:"developer"`
	Category   string     `json:"category"`
	Kind       string     `json:"kind"`
	Version    string     `json:"version"`
	Updated    *string    `json:"updated"`
	Created    *string    `json:"created"`
	FirstSeen  time.Time  `json:"firstSeen"`
	DelistedAt *time.Time `json:"delistedAt"`
	MetadataAt time.Time  `json:"metadataAt"`
	Latest     *reading   `json:"latest"`   // the latest reading in the week up to the day's end
	Readings   []reading  `json:"readings"` // the day's readings, oldest first
}

func toReading(s views.Store, r *analytics.ExportReading) reading {
	out := reading{ReadAt: r.At, Usage: r.Usage, WeeklyDownloads: r.WeeklyDownloads, Rating: r.Rating, RatingCount: r.RatingCount, Size: r.Usage}
	if s == views.Apple {
		out.Size = r.RatingCount
	}
	return out
}

func date(t *time.Time) *string {
	if t == nil {
		return nil
	}
	s := t.UTC().Format(time.DateOnly)
	return &s
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func document(r *analytics.ExportRow) line {
	l := line{Store: r.Store.String(), ID: r.ID, Slug: r.Slug, Name: r.Name, Developer: r.Developer, Category: r.Category,
		Kind: r.Kind.String(), Version: r.Version, Updated: date(r.Updated), Created: date(r.Created), FirstSeen: r.FirstSeen,
		DelistedAt: utc(r.DelistedAt), MetadataAt: r.MetadataAt, Readings: make([]reading, len(r.Readings))}
	if r.Latest != nil {
		x := toReading(r.Store, r.Latest)
		l.Latest = &x
	}
	for i := range r.Readings {
		l.Readings[i] = toReading(r.Store, &r.Readings[i])
	}
	return l
}

// text neutralises store text for a spreadsheet (as the API's CSV).
func text(s string) string {
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

func record(l *line, dayReadings int) []string {
	u := func(v *uint64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatUint(*v, 10)
	}
	str := func(v *string) string {
		if v == nil {
			return ""
		}
		return *v
	}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.Format(time.RFC3339)
	}
	var readAt, size, usage, weekly, rating, count string
	if r := l.Latest; r != nil {
		readAt, size, usage, weekly, count = ts(&r.ReadAt), u(r.Size), u(r.Usage), u(r.WeeklyDownloads), u(r.RatingCount)
		if r.Rating != nil {
			rating = strconv.FormatFloat(*r.Rating, 'f', -1, 64)
		}
	}
	return []string{l.Store, text(l.ID), text(str(l.Slug)), text(l.Name), text(l.Developer), text(l.Category), l.Kind, text(l.Version),
		str(l.Updated), str(l.Created), ts(&l.FirstSeen), ts(l.DelistedAt), ts(&l.MetadataAt), readAt, size, usage, weekly, rating, count,
		strconv.Itoa(dayReadings)}
}

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
	return "", File{}, false
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
	final := filepath.Join(dir, m.Day)
	if _, err := readManifest(final); err == nil {
		return false, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, fmt.Errorf("copy export %s: %w", m.Day, err)
	}
	tmp, err := os.MkdirTemp(dir, ".building-"+m.Day+"-")
	if err != nil {
		return false, fmt.Errorf("copy export %s: %w", m.Day, err)
	}
	defer os.RemoveAll(tmp)
	for _, f := range m.Files {
		if err := copyFile(ctx, filepath.Join(tmp, f.Name), f, open); err != nil {
			return false, fmt.Errorf("copy export %s: %w", m.Day, err)
		}
	}
	b, _ := json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(filepath.Join(tmp, manifestName), b, 0o644); err != nil {
		return false, fmt.Errorf("copy export %s: %w", m.Day, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return false, fmt.Errorf("copy export %s: %w", m.Day, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		if _, rerr := readManifest(final); rerr == nil {
			return false, nil
		}
		return false, fmt.Errorf("copy export %s: %w", m.Day, err)
	}
	return true, nil
}

// checkNames reports an error unless m names each file an export has at
// most once, and no other (a name from another edge never becomes a
// path unchecked).
func checkNames(m Manifest) error {
	allowed := map[string]bool{}
	for _, s := range views.Stores {
		for _, format := range formats {
			allowed[fileName(s, format)] = true
		}
		allowed[eventsName(s)] = true
	}
	for _, f := range m.Files {
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
