package edge_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/views"
)

type lakeFile struct {
	exports.File
	URL string
}

type lakeListing struct {
	Days []struct {
		Day   string
		Files []lakeFile
	}
	Latest *struct {
		Day   string
		Files []lakeFile
	}
}

// lakeRun starts an edge over the seeded data, runs the jobs the lake is
// built from, and returns it with a key.
func lakeRun(t *testing.T, opts ...func(*edge.Config)) (*harness, edgetest.Dataset, lakeListing, map[string]string) {
	t.Helper()
	cfg := seeded(t)
	h := start(t, cfg, opts...)
	for _, job := range []string{"views", "ranks", "exports"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(job, err)
		}
	}
	key, _ := signUpWithKey(t, h, "lake@example.com")
	return h, cfg, getOK[lakeListing](t, h.Base+"/api/v1/exports"), bearer(key)
}

// parquetOf returns the Parquet files of files by name.
func parquetOf(files []lakeFile) map[string]lakeFile {
	out := map[string]lakeFile{}
	for _, f := range files {
		if f.Format == exports.FormatParquet {
			out[f.Name] = f
		}
	}
	return out
}

// download fetches f into dir (under its name) and checks its bytes
// against the listing.
func download(t *testing.T, h *harness, auth map[string]string, f lakeFile, dir string) string {
	t.Helper()
	a := call(t, "GET", h.Base+f.URL, auth, "")
	sum := sha256.Sum256(a.body)
	if a.status != 200 || int64(len(a.body)) != f.Size || hex.EncodeToString(sum[:]) != f.SHA256 || a.header.Get("Content-Type") != "application/vnd.apache.parquet" ||
		a.header.Get("Accept-Ranges") != "bytes" || a.header.Get("ETag") != `"`+f.SHA256+`"` {
		t.Fatalf("%s: %d, %d bytes (listed %d), %v", f.URL, a.status, len(a.body), f.Size, a.header)
	}
	path := filepath.Join(dir, filepath.FromSlash(f.Name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, a.body, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// duckdb runs queries with DuckDB (npm's @duckdb/node-api) and returns
// each one's rows.
func duckdb(t *testing.T, queries ...string) [][]map[string]any {
	t.Helper()
	in, _ := json.Marshal(queries)
	cmd := exec.Command(filepath.Join(nodeDir(t), "node"), "duckdb.mjs")
	cmd.Dir = "testdata/lake"
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("duckdb: %v\n%s", err, stderr)
	}
	var rows [][]map[string]any
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatalf("duckdb: %v: %s", err, out)
	}
	return rows
}

func parseDay(t *testing.T, s string) views.Day {
	t.Helper()
	d, err := time.Parse(time.DateOnly, s)
	if err != nil {
		t.Fatal(err)
	}
	return views.DayOf(d)
}

// sqlPath quotes a path as a DuckDB string.
func sqlPath(p string) string { return "'" + strings.ReplaceAll(p, "'", "''") + "'" }

// TestLake runs an edge over the seeded data with its exports built, and
// reads its lake: the tables (lakeTables), one listing over HTTP ranges
// (lakeOverHTTP), the ranges' answers and their counts (lakeRanges), a
// damaged file (lakeDamage, last: it rebuilds a day).
func TestLake(t *testing.T) {
	h, cfg, l, auth := lakeRun(t, withLimits(limits.Policy{PerMinute: 1000, PerDay: 1000}, limits.Policy{PerMinute: 1000, PerDay: 1000}))
	t.Run("tables", func(t *testing.T) { lakeTables(t, h, cfg, l, auth) })
	t.Run("http", func(t *testing.T) { lakeOverHTTP(t, h, l, auth) })
	t.Run("ranges", func(t *testing.T) { lakeRanges(t, h, l, auth) })
	t.Run("docs", func(t *testing.T) { lakeDocs(t, h, l, auth) })
	t.Run("schemas", func(t *testing.T) { lakeSchemas(t, h, l, auth) })
	t.Run("damage", func(t *testing.T) { lakeDamage(t, h, l, auth) })
}

// lakeTables reads the lake's files as an analyst does: downloaded
// over HTTP (each file's bytes as listed), then queried with DuckDB,
// whose answers must equal the NDJSON exports, ClickHouse and the API:
// each table of every store in each day and in the latest set, its
// schema's version in the footer, Hive partitions as columns, the day's
// readings the same rows as the whole history's for that day, the
// changes the day's events and the takeovers the API derives, the
// reviews without text or author; and a day built twice is the same
// bytes.
func lakeTables(t *testing.T, h *harness, cfg edgetest.Dataset, l lakeListing, auth map[string]string) {
	if len(l.Days) < 3 || l.Latest == nil || l.Latest.Day != l.Days[0].Day {
		t.Fatalf("%d days, latest %+v: want the latest set of the newest day", len(l.Days), l.Latest)
	}
	dir := t.TempDir()
	day := l.Days[1]
	pq := parquetOf(day.Files)
	if len(pq) != len(exports.Tables)*int(views.NumStores) || len(parquetOf(l.Latest.Files)) != len(pq) {
		t.Fatalf("%s: %d Parquet files, latest %d; want a table a store", day.Day, len(pq), len(l.Latest.Files))
	}
	d := parseDay(t, day.Day)
	for _, s := range views.Stores {
		for _, table := range exports.Tables {
			f, ok := pq[exports.ParquetName(table, s, d)]
			if !ok || f.Content != table || f.Store != s.String() || f.URL != "/api/v1/exports/"+day.Day+"/"+f.Name {
				t.Fatalf("%s: no file %s, or %+v", day.Day, exports.ParquetName(table, s, d), f)
			}
			download(t, h, auth, f, filepath.Join(dir, "days", day.Day))
		}
	}
	latest := filepath.Join(dir, "latest")
	for _, f := range parquetOf(l.Latest.Files) {
		if f.URL != "/api/v1/exports/latest/"+f.Name {
			t.Fatalf("latest file at %s", f.URL)
		}
		download(t, h, auth, f, latest)
	}
	// Two days of listings, for the Hive partitions across days.
	for _, f := range parquetOf(l.Days[2].Files) {
		if f.Content == exports.TableListings {
			download(t, h, auth, f, filepath.Join(dir, "days", l.Days[2].Day))
		}
	}
	daysGlob := func(table string) string {
		return sqlPath(filepath.Join(dir, "days", "*", "parquet", table, "*", "*", "*.parquet"))
	}
	latestOf := func(table string) string {
		return sqlPath(filepath.Join(latest, "parquet", table, "*", "*.parquet"))
	}
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	rows := duckdb(t,
		// 0: listings by store and day, with Hive's columns.
		"SELECT store, CAST(date AS VARCHAR) AS date, count(*)::INTEGER AS n, coalesce(sum(size), 0)::DOUBLE AS size FROM read_parquet("+daysGlob("listings")+", hive_partitioning = true) GROUP BY ALL ORDER BY ALL",
		// 1: the day's readings against the history's rows of that day.
		"SELECT store, count(*)::INTEGER AS n, coalesce(sum(size), 0)::DOUBLE AS size, coalesce(sum(rank), 0)::DOUBLE AS ranks, coalesce(sum(category_rank), 0)::DOUBLE AS cranks FROM read_parquet("+sqlPath(filepath.Join(dir, "days", day.Day, "parquet", "readings", "*", "*", "*.parquet"))+", hive_partitioning = true) GROUP BY ALL ORDER BY ALL",
		"SELECT store, count(*)::INTEGER AS n, coalesce(sum(size), 0)::DOUBLE AS size, coalesce(sum(rank), 0)::DOUBLE AS ranks, coalesce(sum(category_rank), 0)::DOUBLE AS cranks FROM read_parquet("+latestOf("readings")+", hive_partitioning = true) WHERE day = DATE '"+day.Day+"' GROUP BY ALL ORDER BY ALL",
		// 3: every reading of the history, by store.
		"SELECT store, count(*)::INTEGER AS n FROM read_parquet("+latestOf("readings")+", hive_partitioning = true) GROUP BY ALL ORDER BY ALL",
		// 4: the schemas' versions.
		"SELECT DISTINCT decode(value) AS schema FROM parquet_kv_metadata("+sqlPath(filepath.Join(latest, "parquet", "*", "*", "*.parquet"))+") WHERE decode(key) = 'edge.schema' ORDER BY 1",
		// 5: the reviews' columns.
		"SELECT column_name FROM (DESCRIBE SELECT * FROM read_parquet("+latestOf("reviews")+"))",
		// 6: reviews by store.
		"SELECT store, count(*)::INTEGER AS n FROM read_parquet("+latestOf("reviews")+", hive_partitioning = true) GROUP BY ALL ORDER BY ALL",
		// 7: the day's changes by store and kind.
		"SELECT store, kind, count(*)::INTEGER AS n FROM read_parquet("+daysGlob("changes")+", hive_partitioning = true) GROUP BY ALL ORDER BY ALL",
		// 8: takeovers of the whole log, with their two joined changes.
		"SELECT t.store, t.id, CAST(t.changed_at AS VARCHAR) AS at, t.before, t.after, len(t.joins)::INTEGER AS joins, array_to_string(t.joins, ' ') AS joinIds, "+
			"(SELECT count(*) FROM read_parquet("+latestOf("changes")+", hive_partitioning = true) j WHERE list_contains(t.joins, j.event_id) AND j.takeover)::INTEGER AS joined "+
			"FROM read_parquet("+latestOf("changes")+", hive_partitioning = true) t WHERE t.kind = 'takeover' ORDER BY ALL",
	)
	// Listings: the NDJSON files' rows, and the sum of their latest size.
	for _, r := range rows[0] {
		ndDay := r["date"].(string)
		var want int
		for _, dd := range l.Days {
			if dd.Day != ndDay {
				continue
			}
			for _, f := range dd.Files {
				if f.Format == "ndjson" && f.Content == exports.ContentListings && f.Store == r["store"] {
					want = f.Rows
				}
			}
		}
		if int(r["n"].(float64)) != want || want == 0 {
			t.Errorf("listings of %s on %s: DuckDB counts %v, the NDJSON export %d", r["store"], ndDay, r["n"], want)
		}
	}
	if len(rows[0]) != 2*int(views.NumStores) {
		t.Errorf("listings over two days: %d partitions, want %d: %v", len(rows[0]), 2*views.NumStores, rows[0])
	}
	if fmt.Sprint(rows[1]) != fmt.Sprint(rows[2]) || len(rows[1]) == 0 {
		t.Errorf("the day's readings %v, the history's of that day %v", rows[1], rows[2])
	}
	ranked := false
	for _, r := range rows[1] {
		ranked = ranked || r["ranks"].(float64) > 0 && r["cranks"].(float64) > 0
	}
	if !ranked {
		t.Errorf("no store and category ranks in the day's readings: %v", rows[1])
	}
	// The history's readings: one a listing and day of series_daily.
	for _, r := range rows[3] {
		s, _ := views.ParseStore(r["store"].(string))
		var want uint64
		if err := conn.QueryRow(context.Background(), "SELECT count() FROM (SELECT DISTINCT id, day FROM series_daily WHERE store = ? AND day <= toDate(?))", uint8(s), l.Latest.Day).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if uint64(r["n"].(float64)) != want {
			t.Errorf("%s: %v readings in the history, ClickHouse %d", s, r["n"], want)
		}
	}
	if got := fmt.Sprint(rows[4]); got != "[map[schema:changes@1] map[schema:listings@1] map[schema:readings@1] map[schema:reviews@1]]" {
		t.Errorf("schemas: %s", got)
	}
	var cols []string
	for _, r := range rows[5] {
		cols = append(cols, r["column_name"].(string))
	}
	if got := strings.Join(cols, ","); got != "store,id,review_id,posted_at,stars,lang,text_chars,crawled_at" {
		t.Errorf("the reviews' columns: %s", got)
	}
	for _, r := range rows[6] {
		s, _ := views.ParseStore(r["store"].(string))
		var want uint64
		conn.QueryRow(context.Background(), "SELECT count() FROM (SELECT DISTINCT listing_id, review_id FROM reviews WHERE store = ? AND crawled_at < ?)", uint8(s), (parseDay(t, l.Latest.Day) + 1).Time()).Scan(&want)
		if uint64(r["n"].(float64)) != want {
			t.Errorf("%s: %v reviews, ClickHouse %d", s, r["n"], want)
		}
	}
	checkLakeChanges(t, h, l, day.Day, rows[7], rows[8], auth)

	// Byte-stable: the day and the latest set built apart.
	other := t.TempDir()
	m, _, err := exports.Build(context.Background(), conn, other, d)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range m.Parquet {
		if pq[f.Name].SHA256 != f.SHA256 {
			t.Errorf("%s built apart: %s, listed %s", f.Name, f.SHA256, pq[f.Name].SHA256)
		}
	}
	newest := parseDay(t, l.Latest.Day)
	if _, _, err := exports.Build(context.Background(), conn, other, newest); err != nil {
		t.Fatal(err)
	}
	ml, _, err := exports.BuildLatest(context.Background(), conn, other, newest)
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range ml.Parquet {
		if f.SHA256 != l.Latest.Files[i].SHA256 || f.Name != l.Latest.Files[i].Name {
			t.Errorf("latest %s built apart: %s, listed %s", f.Name, f.SHA256, l.Latest.Files[i].SHA256)
		}
	}
}

// checkLakeChanges holds the changes table to the day's events files
// (the changes read: every kind but takeover) and the whole log's
// takeovers to the API's event feed.
func checkLakeChanges(t *testing.T, h *harness, l lakeListing, day string, byKind, takeovers []map[string]any, auth map[string]string) {
	t.Helper()
	read := map[string]int{}
	for _, r := range byKind {
		if r["kind"] != "takeover" {
			read[r["store"].(string)] += int(r["n"].(float64))
		}
	}
	total := 0
	for _, dd := range l.Days {
		if dd.Day != day {
			continue
		}
		for _, f := range dd.Files {
			if f.Content == exports.ContentEvents {
				if read[f.Store] != f.Rows {
					t.Errorf("%s on %s: %d changes in the lake, %d in the events file", f.Store, day, read[f.Store], f.Rows)
				}
				total += f.Rows
			}
		}
	}
	if total == 0 {
		t.Fatalf("no change on %s: the test checks nothing", day)
	}
	feed := getOK[struct {
		Events []struct {
			Store, ID, Kind string
			Before, After   *string
			Joins           []string
		}
	}](t, h.Base+"/api/v1/events?kind=takeover&limit=100")
	if len(feed.Events) == 0 || len(takeovers) < len(feed.Events) {
		t.Fatalf("%d takeovers in the feed, %d in the lake", len(feed.Events), len(takeovers))
	}
	for _, r := range takeovers {
		if r["joins"].(float64) != 2 || r["joined"].(float64) != 2 {
			t.Errorf("takeover %v: joins %v changes flagged as its own", r["id"], r["joined"])
		}
	}
	for _, e := range feed.Events {
		found := false
		for _, r := range takeovers {
			found = found || r["store"] == e.Store && r["id"] == e.ID && r["after"] == *e.After && r["joinIds"] == strings.Join(e.Joins, " ")
		}
		if !found {
			t.Errorf("the feed's takeover of %s/%s is not in the lake", e.Store, e.ID)
		}
	}
}

// lakeDocs runs docs/api-v1.md's three DuckDB queries (The lake) as
// written, on the latest set fetched as the docs fetch it, with the
// test's own listing: the growth by category, a listing's rating
// history (the API's days), and the owner changes followed by new
// permissions (every takeover through permissions among them).
func lakeDocs(t *testing.T, h *harness, l lakeListing, auth map[string]string) {
	doc, err := os.ReadFile("../docs/api-v1.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "<!-- lake-queries")
	section, _, _ = strings.Cut(section, "<!-- /lake-queries -->")
	var queries []string
	for _, block := range strings.Split(section, "```sql\n")[1:] {
		q, _, _ := strings.Cut(block, "```")
		queries = append(queries, q)
	}
	if len(queries) != 3 {
		t.Fatalf("%d queries in the docs' lake section, want 3", len(queries))
	}
	dir := t.TempDir()
	for _, f := range parquetOf(l.Latest.Files) {
		if f.Content != exports.TableReviews {
			download(t, h, auth, f, dir)
		}
	}
	top := duckdb(t, "SELECT id FROM read_parquet("+sqlPath(filepath.Join(dir, "parquet", "readings", "store=chrome", "part-0.parquet"))+") GROUP BY id ORDER BY count(*) DESC, id LIMIT 1")[0][0]["id"].(string)
	for i, q := range queries {
		q = strings.ReplaceAll(q, "'lake/", "'"+filepath.Join(dir, "parquet")+"/")
		queries[i] = regexp.MustCompile(`id = '[^']*'`).ReplaceAllString(q, "id = '"+top+"'")
	}
	rows := duckdb(t, queries...)
	if len(rows[0]) == 0 || rows[0][0]["listings"] == nil || rows[0][0]["growth_pct"] == nil {
		t.Errorf("growth by category: %v", rows[0])
	}
	hist := getOK[struct{ Snapshots []struct{ Day string } }](t, h.Base+"/api/v1/listings/chrome/"+top+"/history")
	days := 0
	for _, s := range hist.Snapshots {
		if s.Day <= l.Latest.Day {
			days++
		}
	}
	if len(rows[1]) != days || days == 0 || rows[1][0]["rating"] == nil {
		t.Errorf("the rating history of %s: %d days, the API %d: %v", top, len(rows[1]), days, rows[1])
	}
	takeovers := duckdb(t, "SELECT store, id, CAST(changed_at AS VARCHAR) AS changed FROM read_parquet("+sqlPath(filepath.Join(dir, "parquet", "changes", "*", "*.parquet"))+") WHERE kind = 'takeover' AND len(added) > 0 AND joins[2] IN (SELECT event_id FROM read_parquet("+sqlPath(filepath.Join(dir, "parquet", "changes", "*", "*.parquet"))+") WHERE kind = 'permissions')")[0]
	if len(takeovers) == 0 {
		t.Fatal("no takeover through permissions in the test data: the third query is checked against nothing")
	}
	for _, tk := range takeovers {
		found := false
		for _, r := range rows[2] {
			found = found || r["store"] == tk["store"] && r["id"] == tk["id"] && r["takeover"] == true
		}
		if !found {
			t.Errorf("the takeover of %v/%v at %v is not among the owner changes followed by permissions", tk["store"], tk["id"], tk["changed"])
		}
	}
}
