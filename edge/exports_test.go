package edge_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/cron"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

type exportsListing struct {
	Days []struct {
		Day   string
		Files []struct {
			exports.File
			URL string
		}
	}
}

type exportLine struct {
	Store, ID, Name string
	MetadataAt      time.Time
	Latest          *struct {
		ReadAt time.Time
		Size   *int64
		Usage  *int64
	}
	Readings []struct {
		ReadAt time.Time
		Usage  *int64
	}
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDailyExports runs the exports job over the seeded data and checks
// the listing and the files through HTTP: every closed day with three
// files a store (listings as NDJSON and CSV, and the day's events, checked
// against the seeded versions diffed by hand), each file's size and SHA-256 as listed, a key required, 304 on
// the strong ETag, immutable caching; one listing's line against the raw
// table; the CSV's rows; that a second build of a day, elsewhere, gives
// the same bytes; and that the days past the kept ones are pruned.
func TestDailyExports(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg)
	for _, job := range []string{"views", "exports"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(job, err)
		}
	}
	l := getOK[exportsListing](t, h.Base+"/api/v1/exports")
	newest := views.DayOf(h.State.Load().Replica.Info().ReadingsMark)
	if len(l.Days) < 10 || l.Days[0].Day != (newest-1).String() {
		t.Fatalf("%d days, the newest %v; want every closed day up to %s", len(l.Days), l.Days, newest-1)
	}
	key, _ := signUpWithKey(t, h, "exports@example.com")
	auth := map[string]string{"Authorization": "Bearer " + key}
	day := l.Days[2]
	// The lake's Parquet and schema files, listed after these, are TestLake's.
	day.Files = slices.DeleteFunc(day.Files, func(f struct {
		exports.File
		URL string
	}) bool {
		return f.Format == exports.FormatParquet || f.Format == exports.FormatSchema
	})
	if len(day.Files) != 3*int(views.NumStores) {
		t.Fatalf("%s: %d files", day.Day, len(day.Files))
	}
	// The day's events, diffed by hand from the seeded versions: the
	// changes read, not the takeovers derived from them (docs/api-v1.md,
	// daily exports).
	dayStart, _ := time.Parse(time.DateOnly, day.Day)
	wantEvents := map[string][]string{}
	for _, c := range expectedChanges(edgetest.Seed(800)) {
		if at := time.Unix(c.At, 0); c.Kind != changes.Takeover && !at.Before(dayStart) && at.Before(dayStart.AddDate(0, 0, 1)) {
			wantEvents[c.Store.String()] = append(wantEvents[c.Store.String()], changeKey(&c))
		}
	}
	sortedKeys := func(ks []string) []string { return slices.Sorted(slices.Values(ks)) }
	events := 0
	var chromeND []byte
	for _, f := range day.Files {
		a := call(t, "GET", h.Base+f.URL, auth, "")
		sum := sha256.Sum256(a.body)
		if a.status != 200 || int64(len(a.body)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 ||
			a.header.Get("Cache-Control") != "public, max-age=31536000, immutable" || a.header.Get("Content-Type") != "application/gzip" ||
			a.header.Get("ETag") != `"`+f.SHA256+`"` || a.header.Get("Content-Encoding") != "" {
			t.Fatalf("%s: %d, %d bytes (listed %d), headers %v", f.URL, a.status, len(a.body), f.Size, a.header)
		}
		plain := gunzip(t, a.body)
		if f.Content == exports.ContentEvents {
			var got []string
			for line := range bytes.Lines(plain) {
				var e eventJSON
				if err := json.Unmarshal(line, &e); err != nil || e.Name == nil || *e.Name == "" {
					t.Fatalf("%s: %v, name %v", f.URL, err, e.Name)
				}
				got = append(got, e.key())
			}
			if len(got) != f.Rows || !slices.Equal(sortedKeys(got), sortedKeys(wantEvents[f.Store])) {
				t.Fatalf("%s: %d events (listed %d), want %d:\n%v\nwant\n%v", f.URL, len(got), f.Rows, len(wantEvents[f.Store]), got, wantEvents[f.Store])
			}
			events += len(got)
			continue
		}
		switch f.Format {
		case "ndjson":
			if n := bytes.Count(plain, []byte("\n")); n != f.Rows || f.Rows < 50 {
				t.Errorf("%s: %d lines, listed %d rows", f.URL, n, f.Rows)
			}
			if f.Store == "chrome" {
				chromeND = plain
			}
		case "csv":
			rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(plain, []byte("\ufeff")))).ReadAll()
			if err != nil || len(rows) != f.Rows+1 || rows[0][0] != "store" || !bytes.HasPrefix(plain, []byte("\ufeff")) {
				t.Errorf("%s: %d rows, %v; want a header and %d rows", f.URL, len(rows), err, f.Rows)
			}
		}
		if again := call(t, "GET", h.Base+f.URL, map[string]string{"Authorization": "Bearer " + key, "If-None-Match": `"` + f.SHA256 + `"`}, ""); again.status != 304 {
			t.Errorf("%s revalidated: %d", f.URL, again.status)
		}
	}
	// A listing's line against the raw table: the day's readings, and the
	// latest reading of the week up to the day's end.
	d, _ := time.Parse(time.DateOnly, day.Day)
	checked := 0
	sc := bufio.NewScanner(bytes.NewReader(chromeND))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() && checked < 20 {
		var line exportLine
		if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
			t.Fatal(err)
		}
		raw := rawReadings(t, cfg, views.Chrome, line.ID)
		var want []time.Time
		var latest *time.Time
		for _, at := range raw {
			if !at.Before(d.AddDate(0, 0, -7)) && at.Before(d.AddDate(0, 0, 1)) {
				at := at
				latest = &at
				if !at.Before(d) {
					want = append(want, at)
				}
			}
		}
		if len(line.Readings) != len(want) || (latest == nil) != (line.Latest == nil) || latest != nil && !line.Latest.ReadAt.Equal(*latest) {
			t.Fatalf("%s: %d readings, latest %v; want %d, %v", line.ID, len(line.Readings), line.Latest, len(want), latest)
		}
		for i, r := range line.Readings {
			if !r.ReadAt.Equal(want[i]) {
				t.Errorf("%s reading %d at %s, want %s", line.ID, i, r.ReadAt, want[i])
			}
		}
		checked++
	}

	if checked == 0 {
		t.Fatal("no line of the chrome file was checked")
	}
	if events == 0 {
		t.Fatalf("no event on %s: the test checks nothing of the events files", day.Day)
	}

	// Refusals.
	f := day.Files[0]
	problem(t, get(t, "GET", h.Base+f.URL), 401)
	problem(t, call(t, "GET", h.Base+"/api/v1/exports/"+day.Day+"/nothing.ndjson.gz", auth, ""), 404)
	problem(t, call(t, "GET", h.Base+"/api/v1/exports/"+day.Day+"/..%2Fmanifest.json", auth, ""), 404)
	problem(t, call(t, "GET", h.Base+"/api/v1/exports/1999-01-01/"+f.Name, auth, ""), 404)

	// The same day built apart is the same bytes.
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	other := t.TempDir()
	m, built, err := exports.Build(context.Background(), conn, other, views.DayOf(d))
	if err != nil || !built {
		t.Fatalf("build apart: %v %v", built, err)
	}
	for i, f := range m.Files {
		if f.SHA256 != day.Files[i].SHA256 || f.Name != day.Files[i].Name {
			t.Errorf("%s built apart: %s, want %s", f.Name, f.SHA256, day.Files[i].SHA256)
		}
	}
	// Built again into the same directory: nothing is written.
	if _, built, err := exports.Build(context.Background(), conn, other, views.DayOf(d)); err != nil || built {
		t.Errorf("a day already there was built again: %v %v", built, err)
	}

	// Keeping 3 days prunes the rest; a build left half done an hour ago goes too.
	stale := filepath.Join(h.Exports.Dir(), ".building-2026-01-01-x")
	os.MkdirAll(stale, 0o755)
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(stale, old, old)
	short := cron.NewExports(cron.ExportsConfig{Dir: h.Exports.Dir(), Keep: 3, PerRun: 1}, analytics.NewLazy(*cfg.CH), slog.New(slog.DiscardHandler))
	if err := short.Job("@every 1h").Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if days := short.Days(); len(days) != 3 || days[0].Day != (newest-1).String() {
		t.Errorf("after pruning to 3 days: %d days", len(days))
	}
	// With the ranks job in the fleet, the latest set waits until every
	// day of its history is ranked.
	ranked := cron.NewExports(cron.ExportsConfig{Dir: t.TempDir(), Keep: 1, PerRun: 1, AfterRanks: true}, analytics.NewLazy(*cfg.CH), slog.New(slog.DiscardHandler))
	if err := ranked.Job("@every 1h").Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(ranked.Days()) != 1 || len(ranked.Latest()) != 0 || !ranked.WaitingForRanks() {
		t.Errorf("before the ranks: %d days, %d latest sets, waiting %v; want the day and no set, waiting", len(ranked.Days()), len(ranked.Latest()), ranked.WaitingForRanks())
	}
	if err := h.Jobs.RunNow("ranks"); err != nil {
		t.Fatal(err)
	}
	if err := ranked.Job("@every 1h").Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if sets := ranked.Latest(); len(sets) != 1 || sets[0].Day != (newest-1).String() || ranked.WaitingForRanks() {
		t.Errorf("after the ranks: latest sets %v, waiting %v", sets, ranked.WaitingForRanks())
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("a stale build directory was kept: %v", err)
	}
	entries, _ := os.ReadDir(h.Exports.Dir())
	entries = slices.DeleteFunc(entries, func(e os.DirEntry) bool { return e.Name() == exports.LatestDir })
	if len(entries) != 3 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %s", strings.Join(names, ", "))
	}
}

// rawReadings returns the times of a listing's readings, oldest first,
// from the table.
func rawReadings(t *testing.T, cfg edgetest.Dataset, s views.Store, id string) []time.Time {
	t.Helper()
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rows, err := conn.Query(context.Background(), `SELECT crawled_at FROM snapshots WHERE store = ? AND id = ? ORDER BY crawled_at`, uint8(s), id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var at time.Time
		if err := rows.Scan(&at); err != nil {
			t.Fatal(err)
		}
		out = append(out, at.UTC())
	}
	return out
}
