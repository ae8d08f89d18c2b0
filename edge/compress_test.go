package edge_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/coding"
)

// coded is an answer asked for with an Accept-Encoding of the test's
// own: its raw bytes as sent, and the same decoded.
type coded struct {
	status  int
	header  http.Header
	raw     []byte
	decoded []byte
}

// fetch asks url with method and the given headers (Accept-Encoding set
// by the caller, so that Go's client neither adds nor undoes gzip), and
// decodes the body by its Content-Encoding.
func fetch(t testing.TB, method, url string, headers ...string) coded {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept-Encoding", "") // present: Go's client adds no gzip of its own
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if method == "HEAD" || resp.StatusCode == http.StatusNotModified {
		return coded{resp.StatusCode, resp.Header, raw, nil}
	}
	return coded{resp.StatusCode, resp.Header, raw, decodeAs(t, resp.Header.Get("Content-Encoding"), raw)}
}

// decodeAs decodes raw in the named content coding.
func decodeAs(t testing.TB, enc string, raw []byte) []byte {
	t.Helper()
	out, err := coding.Decode(enc, raw)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestCompression asks a large answer and a small one through real HTTP
// with every kind of Accept-Encoding (the rules themselves are
// coding.TestChoose's) and checks the coding chosen, Vary (on 304s too),
// the one ETag shared by every coding, Content-Length, HEAD and the 406
// problem.
func TestCompression(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	// The small answer: a topic's listings in a store where it has none.
	var none string
	for _, tg := range getOK[struct {
		Tags []struct {
			Slug     string
			Listings map[string]int
		}
	}](t, h.Base+"/api/v1/tags").Tags {
		if tg.Listings["apple"] == 0 {
			none = tg.Slug
			break
		}
	}
	if none == "" {
		t.Fatal("every topic has apple listings: no small answer to ask for")
	}
	large, small := h.Base+"/api/v1/listings?limit=60", h.Base+"/api/v1/tags/"+none+"/apple"
	plain := fetch(t, "GET", large)
	if plain.status != 200 || len(plain.raw) < 8<<10 || plain.header.Get("Content-Encoding") != "" {
		t.Fatalf("identity: %d, %d bytes, Content-Encoding %q", plain.status, len(plain.raw), plain.header.Get("Content-Encoding"))
	}
	etag := plain.header.Get("ETag")
	for _, tt := range []struct{ accept, want string }{
		// A miss: the cheapest coding first at equal weight (zstd, gzip, br).
		{"", ""}, {"gzip", "gzip"}, {"x-gzip", "gzip"}, {"gzip, deflate, br, zstd", "zstd"}, {"gzip, br", "gzip"},
		{"br", "br"}, {"br;q=0.5, gzip;q=0.9", "gzip"}, {"*", "zstd"}, {"*;q=0.5, zstd;q=0, gzip;q=0", "br"},
		{"identity;q=0, gzip", "gzip"},
		{"deflate", ""}, {"gzip;q=0.1, identity", ""}, {"GZIP", "gzip"},
	} {
		var a coded
		if tt.accept == "" {
			a = fetch(t, "GET", large)
		} else {
			a = fetch(t, "GET", large, "Accept-Encoding", tt.accept)
		}
		if a.status != 200 || a.header.Get("Content-Encoding") != tt.want || !bytes.Equal(a.decoded, plain.raw) {
			t.Errorf("Accept-Encoding %q: %d, Content-Encoding %q (want %q), %d bytes decoding to %d (want %d)", tt.accept,
				a.status, a.header.Get("Content-Encoding"), tt.want, len(a.raw), len(a.decoded), len(plain.raw))
		}
		if cl := a.header.Get("Content-Length"); cl != strconv.Itoa(len(a.raw)) {
			t.Errorf("Accept-Encoding %q: Content-Length %q for %d bytes", tt.accept, cl, len(a.raw))
		}
		if tt.want != "" && len(a.raw) > len(plain.raw)/3 {
			t.Errorf("Accept-Encoding %q: %d of %d bytes: not compressed", tt.accept, len(a.raw), len(plain.raw))
		}
		if a.header.Get("ETag") != etag {
			t.Errorf("Accept-Encoding %q: ETag %q, want the identity answer's %q (one weak tag for every coding)", tt.accept, a.header.Get("ETag"), etag)
		}
		// The listings are also a CSV and an NDJSON file, chosen by Accept.
		if v := a.header.Get("Vary"); v != "Accept-Encoding, Authorization, X-Api-Key, Accept" {
			t.Errorf("Accept-Encoding %q: Vary %q", tt.accept, v)
		}
	}

	// Revalidation of a compressed copy: the shared tag gives 304, with
	// Vary, whatever the coding asked.
	for _, accept := range []string{"gzip", "br", "zstd"} {
		a := fetch(t, "GET", large, "Accept-Encoding", accept, "If-None-Match", etag)
		if a.status != 304 || len(a.raw) != 0 || a.header.Get("Vary") == "" || a.header.Get("ETag") != etag {
			t.Errorf("revalidate a %s copy: %d, %d bytes, Vary %q, ETag %q", accept, a.status, len(a.raw), a.header.Get("Vary"), a.header.Get("ETag"))
		}
	}

	// HEAD gives GET's headers, in the coding asked.
	for _, accept := range []string{"", "br", "gzip"} {
		getA, headA := fetch(t, "GET", large, "Accept-Encoding", accept), fetch(t, "HEAD", large, "Accept-Encoding", accept)
		for _, name := range []string{"Content-Encoding", "Content-Length", "Content-Type", "ETag", "Vary", "Cache-Control", "Last-Modified"} {
			if getA.header.Get(name) != headA.header.Get(name) {
				t.Errorf("HEAD with Accept-Encoding %q: %s %q, GET has %q", accept, name, headA.header.Get(name), getA.header.Get(name))
			}
		}
		if headA.status != 200 || len(headA.raw) != 0 {
			t.Errorf("HEAD: %d with %d bytes", headA.status, len(headA.raw))
		}
	}

	// A small answer is sent as it is, varying by key (and, as a topic's
	// listings are also files, by Accept) only; refusing identity for
	// it is a 406 problem that says what to send.
	s := fetch(t, "GET", small, "Accept-Encoding", "gzip, br")
	if s.status != 200 || len(s.raw) >= 1024 || s.header.Get("Content-Encoding") != "" || s.header.Get("Vary") != "Authorization, X-Api-Key, Accept" {
		t.Errorf("small answer: %d, %d bytes, Content-Encoding %q, Vary %q", s.status, len(s.raw), s.header.Get("Content-Encoding"), s.header.Get("Vary"))
	}
	for _, url := range []string{small, large} {
		for _, accept := range []string{"identity;q=0", "*;q=0", "gzip;q=0, br;q=0, zstd;q=0, identity;q=0"} {
			a := fetch(t, "GET", url, "Accept-Encoding", accept)
			if a.status != http.StatusNotAcceptable || a.header.Get("Content-Type") != "application/problem+json" ||
				!strings.Contains(string(a.raw), "Accept-Encoding") || a.header.Get("ETag") != "" || a.header.Get("Last-Modified") != "" {
				t.Errorf("%s with %q: %d %s ETag %q %s", url, accept, a.status, a.header.Get("Content-Type"), a.header.Get("ETag"), a.raw)
			}
		}
	}
	// The legacy API's public answers vary by coding alone.
	if v := fetch(t, "GET", h.Base+"/api/extensions?platform=0", "Accept-Encoding", "gzip").header.Get("Vary"); v != "Accept-Encoding" {
		t.Errorf("legacy Vary %q, want Accept-Encoding", v)
	}
}

// TestPrecompressedOnPublish checks that the answers a published state
// determines, and the pages dashboards open with, are encoded at the best
// level before anyone asks (each
// coding's bytes are those of coding.Best), that an answer built on a
// miss is encoded at the fast level when first asked for in a coding, and
// that a state whose answers did not change reuses the variants made for
// the previous one. It runs in make test's pass without the race
// detector (NORACE in deploy/test.sh); TestPrecompressWhileAsked in
// edge/answer checks rounds beside requests under it.
func TestPrecompressedOnPublish(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) { c.NoPrecompress = false })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, h.Base, "edge_precompress_round_seconds_count", 1)
	for _, path := range []string{"/api/v1/listings", "/api/extensions?platform=0", "/api/v1/charts/chrome", "/api/summary", "/api/v1/openapi.json", "/stores/chrome", "/charts/firefox"} {
		plain := fetch(t, "GET", h.Base+path)
		if len(plain.raw) < 1024 {
			t.Fatalf("%s: %d bytes, too small to be compressed", path, len(plain.raw))
		}
		for _, c := range []coding.Coding{coding.Brotli, coding.Zstd, coding.Gzip} {
			want, err := coding.Compress(c, coding.Best, plain.raw)
			if err != nil {
				t.Fatal(err)
			}
			if a := fetch(t, "GET", h.Base+path, "Accept-Encoding", c.String()); !bytes.Equal(a.raw, want) {
				t.Errorf("%s in %v: %d bytes, want the best level's %d", path, c, len(a.raw), len(want))
			}
		}
	}
	// A browser gets the smallest coding of a precompressed answer (br),
	// the cheapest of one compressed at a miss (zstd).
	if enc := fetch(t, "GET", h.Base+"/api/v1/listings", "Accept-Encoding", "gzip, deflate, br, zstd").header.Get("Content-Encoding"); enc != "br" {
		t.Errorf("precompressed answer for a browser: %q, want br", enc)
	}
	if enc := fetch(t, "GET", h.Base+"/api/v1/listings?limit=58", "Accept-Encoding", "gzip, deflate, br, zstd").header.Get("Content-Encoding"); enc != "zstd" {
		t.Errorf("answer of a miss for a browser: %q, want zstd", enc)
	}

	// The edge's own requests are not counted as requests: /api/permissions
	// was asked by the precompression alone.
	if n := metricOf(t, h.Base, `edge_http_requests_total{route="/api/permissions",status="200"}`); n != 0 {
		t.Errorf("%v requests to /api/permissions counted; the edge's own are not requests", n)
	}

	// A miss: the fast level.
	path := "/api/v1/listings?limit=57&sort=rating"
	plain := fetch(t, "GET", h.Base+path)
	want, err := coding.Compress(coding.Brotli, coding.Fast, plain.raw)
	if err != nil {
		t.Fatal(err)
	}
	if a := fetch(t, "GET", h.Base+path, "Accept-Encoding", "br"); !bytes.Equal(a.raw, want) {
		t.Errorf("%s in br: %d bytes, want the fast level's %d", path, len(a.raw), len(want))
	}

	// The next state holds the same figures: its answers take the
	// variants already made instead of compressing again.
	compressed := metricOf(t, h.Base, `edge_precompressed_answers_total{how="compressed"}`)
	if compressed < 10 {
		t.Fatalf("%v answers compressed in the first round, want the published ones", compressed)
	}
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, h.Base, "edge_precompress_round_seconds_count", 2)
	// Every answer but the three static documents of 1 KiB or more (the
	// OpenAPI description, the reference's script and the definitions'
	// page, compressed once)
	// keeps its encodings: the /api/extensions pages too, whose rows carry
	// lc, the data's now of the history's read, unchanged with the data.
	const static, withLC = 3, 0
	reused := metricOf(t, h.Base, `edge_precompressed_answers_total{how="reused"}`)
	again := metricOf(t, h.Base, `edge_precompressed_answers_total{how="compressed"}`) - compressed
	if again != withLC || reused != compressed-static-withLC {
		t.Errorf("second round: %v compressed again (want the %d pages with lc), %v reused (want the other %v of the first round's %v)",
			again, withLC, reused, compressed-static-withLC, compressed)
	}
}

// metricOf returns the value of the sample named (with its labels) in
// the edge's /metrics, or 0.
func metricOf(t testing.TB, base, sample string) float64 {
	t.Helper()
	body := string(fetch(t, "GET", base+"/metrics").raw)
	for line := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(line, sample+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				t.Fatalf("%s: %v", sample, err)
			}
			return f
		}
	}
	return 0
}

// waitMetric waits until a sample of /metrics reaches at least min.
func waitMetric(t testing.TB, base, sample string, min float64) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute) // a round takes seconds under the race detector
	for metricOf(t, base, sample) < min {
		if time.Now().After(deadline) {
			t.Fatalf("%s stayed below %v", sample, min)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestToolServerCompressed: the tool server's answers of 1 KiB or more
// (tools/list, a tool call) are compressed for the request in the coding
// it prefers, and sent as they are to a client that asks for none or
// refuses every coding (never a 406 for a tool call).
func TestToolServerCompressed(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	post := func(body, accept string) coded {
		t.Helper()
		req, _ := http.NewRequest("POST", h.Base+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-06-18")
		req.Header.Set("Accept-Encoding", accept)
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return coded{resp.StatusCode, resp.Header, raw, decodeAs(t, resp.Header.Get("Content-Encoding"), raw)}
	}
	for _, body := range []string{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_tags","arguments":{}}}`} {
		plain := post(body, "")
		if plain.status != 200 || len(plain.raw) < 1024 || plain.header.Get("Content-Encoding") != "" || !strings.Contains(string(plain.raw), `"result"`) {
			t.Fatalf("%s: %d, %d bytes, Content-Encoding %q", body, plain.status, len(plain.raw), plain.header.Get("Content-Encoding"))
		}
		for _, tt := range []struct{ accept, want string }{{"gzip", "gzip"}, {"br", "br"}, {"gzip, br, zstd", "zstd"}, {"identity;q=0", ""}} {
			a := post(body, tt.accept)
			if a.status != 200 || a.header.Get("Content-Encoding") != tt.want || !bytes.Equal(a.decoded, plain.raw) {
				t.Errorf("%s with %q: %d, Content-Encoding %q (want %q), decodes to the plain answer: %v", body, tt.accept,
					a.status, a.header.Get("Content-Encoding"), tt.want, bytes.Equal(a.decoded, plain.raw))
			}
			if tt.want != "" && (len(a.raw) > len(plain.raw)/2 || !strings.Contains(a.header.Get("Vary"), "Accept-Encoding")) {
				t.Errorf("%s with %q: %d of %d bytes, Vary %q", body, tt.accept, len(a.raw), len(plain.raw), a.header.Get("Vary"))
			}
		}
	}
}
