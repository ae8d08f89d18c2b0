package edge_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/limits"
	v1 "github.com/edge-stats/edge/edge/v1"
)

// chromium returns the path of Debian's chromium, failing the test in CI
// (make deps installs it) and skipping it elsewhere when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (make deps installs it)")
		}
		t.Skip("chromium is not installed")
	}
	return bin
}

// renderedDOM loads url in headless Chromium, lets its scripts run for up
// to budget of virtual time, and returns the DOM it made. Chromium runs
// with what this machine's closed network needs (no background
// connections) and a profile of its own.
func renderedDOM(t *testing.T, url string, budget time.Duration) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
		"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir="+t.TempDir(), "--virtual-time-budget="+strings.TrimSuffix(budget.String(), "s")+"000", "--dump-dom", url)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", url, err)
	}
	return string(out)
}

// TestDocsRenderInChromium opens /docs in a real browser and checks that
// the reference rendered every path of the OpenAPI description, from the
// embedded Redoc alone.
func TestDocsRenderInChromium(t *testing.T) {
	h := start(t, synthetic(t))
	dom := renderedDOM(t, h.Base+"/docs", 20*time.Second)
	var spec struct {
		Paths map[string]any `json:"paths"`
	}
	raw, err := v1.OpenAPI()
	if err != nil || json.Unmarshal(raw, &spec) != nil || len(spec.Paths) == 0 {
		t.Fatalf("openapi: %v", err)
	}
	for path := range spec.Paths {
		if !strings.Contains(dom, path) {
			t.Errorf("/docs did not render %s", path)
		}
	}
	if t.Failed() {
		t.Logf("DOM (%d bytes): %.2000s", len(dom), dom)
	}
}

// crossOriginPage calls the APIs of api from a page of another origin: a
// read without a key (no preflight), the same read with a key
// (Authorization: a preflight; v1 answers carry Vary: Authorization, so
// the browser's cache does not answer it with the copy of the read
// without a key, whose body is the same but whose RateLimit headers are
// not the key's), a revalidation with the ETag it read (If-None-Match: a
// preflight), and a legacy read; it writes what it saw, as JavaScript
// sees it, into #out. Chromium asks for every answer in br or zstd.
const crossOriginPage = `<!doctype html><html><body><pre id="out">pending</pre><script>
const api = %q, key = %q;
(async () => {
  const out = {};
  try {
    const a = await fetch(api + "/api/v1/tags");
    out.anon = a.status; out.etag = a.headers.get("ETag"); out.anonRemaining = a.headers.get("RateLimit-Remaining");
    const k = await fetch(api + "/api/v1/tags", {headers: {"Authorization": "Bearer " + key}});
    out.keyed = k.status; out.keyedLimit = k.headers.get("RateLimit-Limit");
    const r = await fetch(api + "/api/v1/tags", {headers: {"If-None-Match": out.etag}, cache: "no-store"});
    out.revalidated = r.status;
    const l = await fetch(api + "/api/summary");
    out.legacy = l.status; out.legacyModified = l.headers.get("Last-Modified");
  } catch (e) { out.error = String(e); }
  document.getElementById("out").textContent = JSON.stringify(out);
})();
</script></body></html>`

// TestCrossOriginPageInChromium runs crossOriginPage in headless Chromium,
// served from a second origin, and checks what the page could read.
func TestCrossOriginPageInChromium(t *testing.T) {
	h := start(t, seeded(t), withLimits(limits.Policy{PerMinute: 100, PerDay: 700}, limits.Policy{PerMinute: 100, PerDay: 5000}))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	key, _ := signUpWithKey(t, h, "page@example.com")
	keyLimit := call(t, "GET", h.Base+"/api/v1/tags", bearer(key), "").header.Get("RateLimit-Limit")
	if keyLimit == "" || keyLimit == "700" {
		t.Fatalf("the key's limit %q is not its own", keyLimit)
	}
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, crossOriginPage, h.Base, key)
	}))
	defer page.Close()
	dom := renderedDOM(t, page.URL, 20*time.Second)
	_, rest, _ := strings.Cut(dom, `<pre id="out">`)
	text, _, _ := strings.Cut(rest, "</pre>")
	var saw struct {
		Anon, Keyed, Revalidated, Legacy int
		ETag, AnonRemaining, KeyedLimit  string
		LegacyModified, Error            string
	}
	if err := json.Unmarshal([]byte(html.UnescapeString(text)), &saw); err != nil {
		t.Fatalf("the page wrote %q: %v", text, err)
	}
	if saw.Error != "" || saw.Anon != 200 || saw.Keyed != 200 || saw.Revalidated != 304 || saw.Legacy != 200 {
		t.Fatalf("the page saw %+v", saw)
	}
	if !strings.HasPrefix(saw.ETag, `W/"`) || saw.AnonRemaining != "699" || saw.KeyedLimit != keyLimit || saw.LegacyModified == "" {
		t.Fatalf("the page could not read its headers: %+v", saw)
	}
}

// TestListingPageInChromium follows the url of a legacy CSV row to the
// listing's HTML page: it is served like every answer (ETag, 304,
// compression), opens in a real browser on a phone-sized screen (the
// screenshot is written where the test's log says), and every figure on
// it equals the listing's JSON document.
func TestListingPageInChromium(t *testing.T) {
	h := start(t, seeded(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	csvBody := get(t, "GET", h.Base+"/api/extensions.csv?platform=2").body
	rows, err := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(csvBody, []byte("\ufeff")))).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("csv: %v, %d rows", err, len(rows))
	}
	link := rows[1][len(rows[1])-1]
	if !strings.HasPrefix(link, edge.DefaultConfig().PublicURL+"/listings/firefox/") {
		t.Fatalf("url column %q", link)
	}
	pageURL := h.Base + strings.TrimPrefix(link, edge.DefaultConfig().PublicURL)
	first := get(t, "GET", pageURL)
	if first.status != http.StatusOK || !strings.HasPrefix(first.header.Get("Content-Type"), "text/html") || first.header.Get("ETag") == "" {
		t.Fatalf("page %s: %d %v", pageURL, first.status, first.header)
	}
	if again := fetch(t, "GET", pageURL, "If-None-Match", first.header.Get("ETag")); again.status != http.StatusNotModified {
		t.Errorf("revalidation: %d, want 304", again.status)
	}
	if gz := fetch(t, "GET", pageURL, "Accept-Encoding", "gzip"); gz.header.Get("Content-Encoding") != "gzip" {
		t.Errorf("asked with gzip: Content-Encoding %q", gz.header.Get("Content-Encoding"))
	}

	dom := renderedDOM(t, pageURL, time.Second)
	shot := filepath.Join(testOut(t), "listing-page.png")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, chromium(t), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
		"--disable-background-networking", "--user-data-dir="+t.TempDir(), "--window-size=412,915", "--hide-scrollbars",
		"--screenshot="+shot, pageURL).CombinedOutput(); err != nil {
		t.Fatalf("screenshot: %v\n%s", err, out)
	}
	if st, err := os.Stat(shot); err != nil || st.Size() < 1000 {
		t.Fatalf("screenshot %s: %v", shot, err)
	}
	t.Logf("the page, on a phone-sized screen: %s", shot)

	docURL := h.Base + "/api/v1/listings/" + strings.TrimPrefix(strings.TrimPrefix(link, edge.DefaultConfig().PublicURL), "/listings/")
	var doc map[string]any
	if err := json.Unmarshal(get(t, "GET", docURL).body, &doc); err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{}
	// usage is size on every store but apple (where it is null): the page
	// shows it once, as size.
	for _, k := range []string{"size", "weeklyDownloads", "rating", "ratingCount", "storeRank", "categoryRank", "rankClimb7d", "readAt"} {
		if v, ok := doc[k]; ok && (k != "weeklyDownloads" || v != nil) {
			want[k] = []string{jsonRaw(v)}
		}
	}
	if stars, ok := doc["stars"].([]any); ok { // the ratings by star, five first
		for i := range stars {
			k := "stars." + strconv.Itoa(i)
			want[k] = []string{jsonRaw(stars[i])}
		}
	}
	growth, _ := doc["growth"].(map[string]any)
	for _, w := range []string{"1d", "7d", "30d", "365d"} {
		c, _ := growth[w].(map[string]any)
		want["growth"] = append(want["growth"], jsonRaw(c["change"]))
	}
	got := map[string][]string{}
	for _, m := range regexp.MustCompile(`data-figure="([^"]+)" data-value="([^"]*)"`).FindAllStringSubmatch(dom, -1) {
		got[m[1]] = append(got[m[1]], html.UnescapeString(m[2]))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("the page's figures %v, the document's %v", got, want)
	}
	if name, _ := doc["name"].(string); !strings.Contains(dom, html.EscapeString(name)) || !strings.Contains(dom, "<svg") {
		t.Errorf("the page lacks the name %q or the chart", name)
	}
}

// testOut returns the directory where tests leave what a person may want
// to look at (screenshots): $EDGE_TEST_OUT, or a directory of the system's
// temporary files that outlives the test.
func testOut(t *testing.T) string {
	dir := os.Getenv("EDGE_TEST_OUT")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "edge-test-out")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}
