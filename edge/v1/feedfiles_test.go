package v1

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/answer"
)

// csvTable reads a CSV answer: its byte-order mark, then its rows.
func csvTable(t *testing.T, a *answer.Answer) [][]string {
	t.Helper()
	body, ok := bytes.CutPrefix(a.Body, []byte("\ufeff"))
	if !ok || a.ContentType != "text/csv; charset=utf-8" {
		t.Fatalf("no byte-order mark or content type %q", a.ContentType)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestChangeFeedFiles: the change feed's CSV is one row a change entry
// under its header, the stores' text guarded against spreadsheet
// formulas and nulls empty; its NDJSON each entry's JSON a line, as the
// JSON answer holds it. (The next file's Link is tested over HTTP:
// TestListReadsAsFiles.)
func TestChangeFeedFiles(t *testing.T) {
	name, size := "=cmd|' /C calc'!A0", int64(1234)
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	page := &changesAnswer{Changes: []changeEntry{
		{Store: "chrome", ID: "abc", Name: &name, ChangedAt: at, MetadataAt: &at, Live: true, Size: &size},
		{Store: "apple", ID: "300002361", ChangedAt: at.Add(time.Hour), ReadAt: &at},
	}, NextCursor: "eyJ2IjoxfQ", Remaining: 3, limit: 2}
	for _, cd := range changesFiles {
		a, err := cd.Encode(nil, page)
		if err != nil {
			t.Fatalf("%s: %v", cd.Name, err)
		}
		if a.ContentType != cd.Type && !strings.HasPrefix(a.ContentType, cd.Type+";") {
			t.Errorf("%s: content type %q", cd.Name, a.ContentType)
		}
		switch cd.Name {
		case "csv":
			rows := csvTable(t, a)
			want := [][]string{changesCSVHeader,
				{"chrome", "abc", "'" + name, "2026-11-01T12:00:00Z", "2026-11-01T12:00:00Z", "", "true", "1234"},
				{"apple", "300002361", "", "2026-11-01T13:00:00Z", "", "2026-11-01T12:00:00Z", "false", ""}}
			if len(rows) != len(want) {
				t.Fatalf("CSV rows %q", rows)
			}
			for i := range want {
				if strings.Join(rows[i], "|") != strings.Join(want[i], "|") {
					t.Errorf("CSV row %d: %q, want %q", i, rows[i], want[i])
				}
			}
		case "ndjson":
			lines := strings.Split(strings.TrimSuffix(string(a.Body), "\n"), "\n")
			for i, e := range page.Changes {
				want, _ := json.Marshal(e)
				if i >= len(lines) || lines[i] != string(want) {
					t.Errorf("NDJSON line %d: %q, want %s", i, lines, want)
				}
			}
		}
	}
}
