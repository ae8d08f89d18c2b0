package edge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"mime/multipart"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/views"
)

// lakeOverHTTP reads one listing's history from the latest readings
// file as a page in a browser does, with hyparquet over range requests
// to a running edge: the rows equal DuckDB's of the downloaded file and
// the API's history, and the reading fetches a small part of the file
// (the test logs how much).
func lakeOverHTTP(t *testing.T, h *harness, l lakeListing, auth map[string]string) {
	var readings lakeFile
	for _, f := range l.Latest.Files {
		if f.Name == exports.LatestName(exports.TableReadings, views.Chrome) {
			readings = f
		}
	}
	path := download(t, h, auth, readings, t.TempDir())
	// The chrome listing with the most days of history.
	top := duckdb(t, "SELECT id, count(*)::INTEGER AS n FROM read_parquet("+sqlPath(path)+") GROUP BY id ORDER BY n DESC, id LIMIT 1")[0][0]
	id := top["id"].(string)
	cols := "id,day,size,rating,rating_count,rank,category_rank"
	want := duckdb(t, "SELECT CAST(day AS VARCHAR) AS day, size::DOUBLE AS size, rating, rating_count::DOUBLE AS rating_count, rank::DOUBLE AS rank, category_rank::DOUBLE AS category_rank FROM read_parquet("+sqlPath(path)+") WHERE id = '"+id+"' ORDER BY day")[0]

	cmd := exec.Command(filepath.Join(nodeDir(t), "node"), "hyparquet.mjs", h.Base+readings.URL, strings.TrimPrefix(auth["Authorization"], "Bearer "), id, cols)
	cmd.Dir = "testdata/lake"
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hyparquet: %v %s", err, stderrOf(err))
	}
	var got struct {
		ByteLength, Requests, Bytes int64
		Statuses                    []int
		Rows                        []struct {
			ID           string
			Day          string
			Size         *float64
			RatingCount  *float64 `json:"rating_count"`
			Rating       *float64
			Rank         *float64
			CategoryRank *float64 `json:"category_rank"`
		}
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(got.Rows) != len(want) || len(want) < 10 {
		t.Fatalf("hyparquet read %d rows of %s, DuckDB %d", len(got.Rows), id, len(want))
	}
	for i, r := range got.Rows {
		w := want[i]
		if !strings.HasPrefix(r.Day, w["day"].(string)) || r.ID != id || !sameNum(r.Size, w["size"]) || !sameNum(r.Rating, w["rating"]) || !sameNum(r.RatingCount, w["rating_count"]) ||
			!sameNum(r.Rank, w["rank"]) || !sameNum(r.CategoryRank, w["category_rank"]) {
			t.Errorf("row %d: hyparquet %+v, DuckDB %v", i, r, w)
		}
	}
	for i, st := range got.Statuses {
		if st != 200 && st != 206 || i > 0 && st != 206 {
			t.Fatalf("hyparquet's requests answered %v: a HEAD, then ranges only", got.Statuses)
		}
	}
	// The test's file is small (its footer fetch is most of it): what one
	// listing's reading of a large file costs is measured in bench/README
	// (The lake), and the layout's bound by lake.TestOneListingReadsLittle.
	if got.ByteLength != readings.Size || got.Bytes > 2*readings.Size {
		t.Errorf("hyparquet fetched %d bytes of %d in %d requests", got.Bytes, readings.Size, got.Requests)
	}
	t.Logf("one listing's %d days: %d requests, %d bytes of a file of %d", len(got.Rows), got.Requests, got.Bytes, readings.Size)

	// The API's history of the listing: the same days and figures.
	hist := getOK[struct {
		Snapshots []struct {
			Day                  string
			Size, StoreRank      *float64
			CategoryRank, Rating *float64
		}
	}](t, h.Base+"/api/v1/listings/chrome/"+id+"/history")
	api := map[string]string{}
	for _, s := range hist.Snapshots {
		api[s.Day] = numText(s.Size) + " " + numText(s.Rating) + " " + numText(s.StoreRank) + " " + numText(s.CategoryRank)
	}
	for _, w := range want {
		d := w["day"].(string)
		if lake := numText(w["size"]) + " " + numText(w["rating"]) + " " + numText(w["rank"]) + " " + numText(w["category_rank"]); api[d] != lake {
			t.Errorf("%s on %s: the lake %q, the API %q", id, d, lake, api[d])
		}
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// numText writes a number of JSON, DuckDB's or the API's, or null.
func numText(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case *float64:
		if x == nil {
			return "null"
		}
		return strconv.FormatFloat(*x, 'g', -1, 64)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case string:
		f, err := strconv.ParseFloat(x, 64)
		if err != nil {
			return x
		}
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return "?"
}

func sameNum(a *float64, b any) bool { return numText(a) == numText(b) }

// lakeRanges holds the export files' answers to RFC 9110 over real
// HTTP: one range, a suffix, several (multipart/byteranges, read back
// with the standard library), overlapping ones merged, past the end
// (416 with Content-Range), If-Range with the ETag or not, a Range that
// does not parse (the whole file), HEAD, CORS for a page elsewhere; a
// reading of a file counted once however many ranges it takes, until it
// has taken twice the file.
func lakeRanges(t *testing.T, h *harness, l lakeListing, auth map[string]string) {
	var f lakeFile
	for _, x := range l.Latest.Files {
		if x.Name == exports.LatestName(exports.TableReadings, views.Chrome) {
			f = x
		}
	}
	whole := call(t, "GET", h.Base+f.URL, auth, "").body
	size := int64(len(whole))
	with := func(kv ...string) map[string]string {
		m := map[string]string{"Authorization": auth["Authorization"]}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	etag := `"` + f.SHA256 + `"`
	cases := []struct {
		name, rng, ifRange string
		status             int
		contentRange       string
		body               []byte
	}{
		{"first bytes", "bytes=0-3", "", 206, "bytes 0-3/" + strconv.FormatInt(size, 10), whole[:4]},
		{"the footer", "bytes=-8", "", 206, "bytes " + strconv.FormatInt(size-8, 10) + "-" + strconv.FormatInt(size-1, 10) + "/" + strconv.FormatInt(size, 10), whole[size-8:]},
		{"past the end, cut", "bytes=" + strconv.FormatInt(size-2, 10) + "-99999999", "", 206, "bytes " + strconv.FormatInt(size-2, 10) + "-" + strconv.FormatInt(size-1, 10) + "/" + strconv.FormatInt(size, 10), whole[size-2:]},
		{"overlapping, merged", "bytes=0-9,5-19", "", 206, "bytes 0-19/" + strconv.FormatInt(size, 10), whole[:20]},
		{"If-Range with the ETag", "bytes=0-3", etag, 206, "bytes 0-3/" + strconv.FormatInt(size, 10), whole[:4]},
		{"If-Range with another ETag", "bytes=0-3", `"other"`, 200, "", whole},
		{"If-Range with a date", "bytes=0-3", "Wed, 21 Oct 2015 07:28:00 GMT", 200, "", whole},
		{"a Range that does not parse", "bytes=3-1", "", 200, "", whole},
		{"another unit", "items=0-3", "", 200, "", whole},
	}
	for _, c := range cases {
		hdr := with("Range", c.rng)
		if c.ifRange != "" {
			hdr["If-Range"] = c.ifRange
		}
		a := call(t, "GET", h.Base+f.URL, hdr, "")
		if a.status != c.status || a.header.Get("Content-Range") != c.contentRange || !bytes.Equal(a.body, c.body) ||
			a.header.Get("ETag") != etag || a.header.Get("Accept-Ranges") != "bytes" || a.header.Get("Content-Length") != strconv.Itoa(len(c.body)) {
			t.Errorf("%s (%s): %d, Content-Range %q, %d bytes; want %d, %q, %d bytes", c.name, c.rng, a.status, a.header.Get("Content-Range"), len(a.body), c.status, c.contentRange, len(c.body))
		}
	}
	// If-Match pins the bytes: another ETag is a 412 naming the file's.
	for im, status := range map[string]int{etag: 206, `"other", ` + etag: 206, "*": 206, `"other"`: 412, "W/" + etag: 412} {
		a := call(t, "GET", h.Base+f.URL, with("Range", "bytes=0-3", "If-Match", im), "")
		if a.status != status || a.header.Get("ETag") != etag || status == 412 && !strings.Contains(problem(t, a, 412), etag) {
			t.Errorf("If-Match %s: %d %v, want %d", im, a.status, a.header, status)
		}
	}
	// Several ranges: multipart/byteranges.
	a := call(t, "GET", h.Base+f.URL, with("Range", "bytes=0-3, 1000-1099, -4"), "")
	mt, params, _ := mime.ParseMediaType(a.header.Get("Content-Type"))
	if a.status != 206 || mt != "multipart/byteranges" {
		t.Fatalf("several ranges: %d %s", a.status, a.header.Get("Content-Type"))
	}
	mr := multipart.NewReader(bytes.NewReader(a.body), params["boundary"])
	for _, r := range [][2]int64{{0, 4}, {1000, 1100}, {size - 4, size}} {
		p, err := mr.NextPart()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(p)
		if !bytes.Equal(b, whole[r[0]:r[1]]) || p.Header.Get("Content-Type") != "application/vnd.apache.parquet" {
			t.Errorf("part %v: %d bytes, %v", r, len(b), p.Header)
		}
	}
	// Past the end: 416, with the file's size.
	a = call(t, "GET", h.Base+f.URL, with("Range", "bytes="+strconv.FormatInt(size, 10)+"-"), "")
	if a.status != 416 || a.header.Get("Content-Range") != "bytes */"+strconv.FormatInt(size, 10) || a.header.Get("Content-Type") != "application/problem+json" {
		t.Errorf("past the end: %d %v %s", a.status, a.header, a.body)
	}
	// HEAD: the length and that ranges are taken, no body.
	a = call(t, "HEAD", h.Base+f.URL, auth, "")
	if a.status != 200 || a.header.Get("Content-Length") != strconv.FormatInt(size, 10) || a.header.Get("Accept-Ranges") != "bytes" || len(a.body) != 0 {
		t.Errorf("HEAD: %d %v", a.status, a.header)
	}
	// CORS: a page elsewhere may send Range and If-Range with a key, and
	// read Content-Range.
	a = call(t, "OPTIONS", h.Base+f.URL, map[string]string{"Origin": "https://notebook.example", "Access-Control-Request-Method": "GET",
		"Access-Control-Request-Headers": "authorization, range, if-range"}, "")
	allowed := strings.ToLower(a.header.Get("Access-Control-Allow-Headers"))
	if a.status != 204 || a.header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(allowed, "range") || !strings.Contains(allowed, "if-range") || !strings.Contains(allowed, "authorization") {
		t.Errorf("preflight: %d %v", a.status, a.header)
	}
	a = call(t, "GET", h.Base+f.URL, with("Range", "bytes=0-3", "Origin", "https://notebook.example"), "")
	if exposed := a.header.Get("Access-Control-Expose-Headers"); a.header.Get("Access-Control-Allow-Origin") != "*" || !strings.Contains(exposed, "Content-Range") || !strings.Contains(exposed, "ETag") {
		t.Errorf("a range's CORS headers: %v", a.header)
	}
	checkReadingCounts(t, h, l, f, with)
}

// lakeDamage damages a file on disk: it is refused once it no longer
// matches its check, never served, and its day is moved aside at the
// next listing, then built again.
func lakeDamage(t *testing.T, h *harness, l lakeListing, auth map[string]string) {
	day := l.Days[0]
	var victim lakeFile
	for _, x := range day.Files {
		if x.Format == exports.FormatParquet && x.Content == exports.TableChanges && x.Store == "chrome" {
			victim = x
		}
	}
	onDisk := filepath.Join(h.Exports.Dir(), day.Day, filepath.FromSlash(victim.Name))
	// Bytes changed in place, its size and time of writing kept (as a
	// copy with cp -p or touch -r keeps them): refused too.
	info, err := os.Stat(onDisk)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(onDisk)
	copy(b[100:], "ZZZZ")
	if err := os.WriteFile(onDisk, b, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(onDisk, info.ModTime(), info.ModTime())
	if a := call(t, "GET", h.Base+victim.URL, auth, ""); a.status != 503 {
		t.Errorf("a file changed in place, its size and time kept: %d", a.status)
	}
	if err := os.Truncate(onDisk, victim.Size/2); err != nil {
		t.Fatal(err)
	}
	if a := call(t, "GET", h.Base+victim.URL, auth, ""); a.status != 503 || bytes.HasPrefix(a.body, []byte("PAR1")) {
		t.Errorf("a truncated file: %d, %d bytes", a.status, len(a.body))
	}
	if err := h.Exports.Refresh(); err != nil {
		t.Fatal(err)
	}
	if days := h.Exports.Days(); len(days) == 0 || days[0].Day == day.Day {
		t.Errorf("the damaged day is still listed")
	}
	if a := call(t, "GET", h.Base+victim.URL, auth, ""); a.status != 404 {
		t.Errorf("a file of a day moved aside: %d", a.status)
	}
	if err := h.Jobs.RunNow("exports"); err != nil {
		t.Fatal(err)
	}
	if a := call(t, "GET", h.Base+victim.URL, auth, ""); a.status != 200 || int64(len(a.body)) != victim.Size {
		t.Errorf("the day built again: %d, %d bytes of %d", a.status, len(a.body), victim.Size)
	}
}

// checkReadingCounts holds the limits' count of export files: the first
// request of a file counts one call, the next ranges of it nothing, until
// they have taken twice the file (and 1 MiB); another file counts again.
func checkReadingCounts(t *testing.T, h *harness, l lakeListing, f lakeFile, with func(...string) map[string]string) {
	t.Helper()
	remaining := func(a answer) int {
		n, err := strconv.Atoi(a.header.Get("RateLimit-Remaining"))
		if err != nil {
			t.Fatalf("RateLimit-Remaining %q (%d)", a.header.Get("RateLimit-Remaining"), a.status)
		}
		return n
	}
	// A file no other part of the test has read.
	var other lakeFile
	oldest := l.Days[len(l.Days)-1]
	for _, x := range oldest.Files {
		if x.Name == exports.ParquetName(exports.TableReadings, views.Chrome, parseDay(t, oldest.Day)) {
			other = x
		}
	}
	first := call(t, "GET", h.Base+other.URL, with("Range", "bytes=0-3"), "")
	before := remaining(first)
	served := int64(4)
	for i := 0; i < 50; i++ {
		a := call(t, "GET", h.Base+other.URL, with("Range", "bytes=-"+strconv.Itoa(100+i)), "")
		served += int64(len(a.body))
		if a.status != 206 || a.header.Get("RateLimit-Remaining") != "" {
			t.Fatalf("range %d of a reading: %d, RateLimit-Remaining %q: want 206 and no count", i, a.status, a.header.Get("RateLimit-Remaining"))
		}
	}
	// The whole file twice more is past the reading's bytes: counted.
	for served <= 2*other.Size+1<<20 {
		a := call(t, "GET", h.Base+other.URL, with(), "")
		served += int64(len(a.body))
		if a.header.Get("RateLimit-Remaining") != "" {
			if n := remaining(a); n != before-1 || served <= 2*other.Size {
				t.Fatalf("counted again after %d bytes (remaining %d, was %d)", served, n, before)
			}
			return
		}
	}
	t.Fatalf("a reading of %d bytes of a file of %d was never counted again", served, other.Size)
}
