package exports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
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
