package exports

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/edge-stats/edge/views"
)

// writeDay writes a published day (a manifest listing one file) into dir.
func writeDay(t *testing.T, dir, day string) {
	t.Helper()
	m := Manifest{Day: day, Files: []File{{Name: "chrome.csv.gz", Store: "chrome", Format: "csv"}}}
	b, _ := json.Marshal(m)
	if err := os.MkdirAll(filepath.Join(dir, day), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, day, manifestName), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestDaysPathAndPrune checks what the API trusts of the directory: only
// days with a manifest are listed (newest first), only files a manifest
// lists have a path, and pruning removes old days and stale builds but
// keeps a build under way.
func TestDaysPathAndPrune(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"2026-02-01", "2026-02-03", "2026-02-02"} {
		writeDay(t, dir, d)
	}
	os.MkdirAll(filepath.Join(dir, "2026-02-04"), 0o755)             // no manifest: not published
	os.MkdirAll(filepath.Join(dir, ".building-2026-02-05-1"), 0o755) // under way
	os.MkdirAll(filepath.Join(dir, ".building-2026-01-01-2"), 0o755) // left an hour ago
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(filepath.Join(dir, ".building-2026-01-01-2"), old, old)
	days, err := Days(dir)
	if err != nil || len(days) != 3 || days[0].Day != "2026-02-03" || days[2].Day != "2026-02-01" {
		t.Fatalf("days %+v, %v", days, err)
	}
	if p, f, ok := Path(dir, days[0], "chrome.csv.gz"); !ok || p != filepath.Join(dir, "2026-02-03", "chrome.csv.gz") || f.Store != "chrome" {
		t.Errorf("a listed file: %q %+v %v", p, f, ok)
	}
	for _, name := range []string{"manifest.json", "../2026-02-01/chrome.csv.gz", "chrome.ndjson.gz", ""} {
		if _, _, ok := Path(dir, days[0], name); ok {
			t.Errorf("%q has a path", name)
		}
	}
	first, _ := time.Parse(time.DateOnly, "2026-02-02")
	if err := Prune(dir, views.DayOf(first)); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	want := []string{".building-2026-02-05-1", "2026-02-02", "2026-02-03", "2026-02-04"}
	if len(names) != len(want) {
		t.Fatalf("after pruning: %v, want %v", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("after pruning: %v, want %v", names, want)
		}
	}
	if days, err := Days(filepath.Join(dir, "missing")); err != nil || days != nil {
		t.Errorf("a missing directory: %v %v", days, err)
	}
}

// TestCopy copies a day from a source as a fleet's follower does: the
// same files and manifest, and nothing at all when a file's bytes, size
// or name are not what the manifest says.
func TestCopy(t *testing.T) {
	files := map[string][]byte{"chrome.csv.gz": []byte("csv bytes"), "edge.ndjson.gz": []byte("ndjson bytes"), "edge.events.ndjson.gz": []byte("events")}
	m := Manifest{Day: "2026-02-03", Built: time.Date(2026, 2, 4, 1, 0, 0, 0, time.UTC), Seconds: 1.5}
	for _, name := range []string{"chrome.csv.gz", "edge.ndjson.gz", "edge.events.ndjson.gz"} {
		sum := sha256.Sum256(files[name])
		content := ContentListings
		if strings.Contains(name, ".events.") {
			content = ContentEvents
		}
		m.Files = append(m.Files, File{Name: name, Content: content, Size: int64(len(files[name])), SHA256: hex.EncodeToString(sum[:])})
	}
	// A schema file, as this release lists them apart (Schemas: a
	// release before them reads no such field, and copies the rest).
	files[SchemaName(TableReadings)] = []byte("{}\n")
	sum := sha256.Sum256(files[SchemaName(TableReadings)])
	m.Schemas = []File{{Name: SchemaName(TableReadings), Content: TableReadings, Format: FormatSchema, Size: 3, SHA256: hex.EncodeToString(sum[:])}}
	open := func(_ context.Context, name string) (io.ReadCloser, error) {
		b, ok := files[name]
		if !ok {
			return nil, errors.New("no such file")
		}
		return io.NopCloser(bytes.NewReader(b)), nil
	}
	dir := t.TempDir()
	copied, err := Copy(context.Background(), dir, m, open)
	if err != nil || !copied {
		t.Fatalf("copy: %v %v", copied, err)
	}
	days, err := Days(dir)
	if err != nil || len(days) != 1 || !reflect.DeepEqual(days[0], m) {
		t.Fatalf("days after the copy: %+v %v", days, err)
	}
	for name, want := range files {
		if got, _ := os.ReadFile(filepath.Join(dir, m.Day, name)); !bytes.Equal(got, want) {
			t.Errorf("%s: %q", name, got)
		}
	}
	if copied, err := Copy(context.Background(), dir, m, open); err != nil || copied {
		t.Errorf("a day there already: %v %v", copied, err)
	}
	// A leader that goes away in the middle of a copy: nothing is
	// published and nothing is left behind, and the next copy is whole.
	broken := t.TempDir()
	served := 0
	dying := func(ctx context.Context, name string) (io.ReadCloser, error) {
		if served++; served > 1 {
			return io.NopCloser(io.MultiReader(strings.NewReader("cut"), iotest.ErrReader(errors.New("connection reset")))), nil
		}
		return open(ctx, name)
	}
	if copied, err := Copy(context.Background(), broken, m, dying); err == nil || copied {
		t.Errorf("a copy cut short: %v %v", copied, err)
	}
	if left, _ := os.ReadDir(broken); len(left) != 0 {
		t.Errorf("a copy cut short left %v", left)
	}
	if copied, err := Copy(context.Background(), broken, m, open); err != nil || !copied {
		t.Errorf("the copy after: %v %v", copied, err)
	}

	bad := func(change func(*Manifest)) Manifest {
		c := m
		c.Files, c.Schemas = slices.Clone(m.Files), slices.Clone(m.Schemas)
		change(&c)
		return c
	}
	for name, c := range map[string]Manifest{
		"another SHA-256":      bad(func(c *Manifest) { c.Files[0].SHA256 = strings.Repeat("0", 64) }),
		"a shorter size":       bad(func(c *Manifest) { c.Files[0].Size-- }),
		"a longer size":        bad(func(c *Manifest) { c.Files[0].Size++ }),
		"a path":               bad(func(c *Manifest) { c.Files[0].Name = "../chrome.csv.gz" }),
		"the manifest":         bad(func(c *Manifest) { c.Files[0].Name = "manifest.json" }),
		"a name twice":         bad(func(c *Manifest) { c.Files[1] = c.Files[0] }),
		"a day not a date":     bad(func(c *Manifest) { c.Day = "../../etc" }),
		"a day not as written": bad(func(c *Manifest) { c.Day = "2026-2-03" }),
		"a schema of no table": bad(func(c *Manifest) { c.Schemas[0].Name = "parquet/nope/schema.json" }),
		"a schema's path":      bad(func(c *Manifest) { c.Schemas[0].Name = "parquet/readings/../../x.json" }),
		"a schema's SHA-256":   bad(func(c *Manifest) { c.Schemas[0].SHA256 = strings.Repeat("0", 64) }),
		"a schema as a table":  bad(func(c *Manifest) { c.Parquet = c.Schemas }),
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if copied, err := Copy(context.Background(), dir, c, open); err == nil || copied {
				t.Fatalf("copied: %v %v", copied, err)
			}
			if days, _ := Days(dir); len(days) != 0 {
				t.Errorf("a day was published: %+v", days)
			}
		})
	}
}
