//go:build linux

package edge_test

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/edge"
)

// edgeVCL is deploy/varnish.vcl, the CDN setup the docs give, with its
// backend at origin: the tests run the very file a reader runs.
func edgeVCL(t *testing.T, origin string) string {
	t.Helper()
	b, err := os.ReadFile("../deploy/varnish.vcl")
	if err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(origin)
	v := strings.Replace(string(b), `.host = "127.0.0.1";`, `.host = "`+host+`";`, 1)
	v = strings.Replace(v, `.port = "8080";`, `.port = "`+port+`";`, 1)
	if v == string(b) {
		t.Fatal("deploy/varnish.vcl no longer names its backend as the test expects")
	}
	return v
}

// startVarnish runs varnishd in the foreground on a free loopback port in
// front of origin, and stops it when the test ends.
func startVarnish(t *testing.T, origin string) string {
	t.Helper()
	bin, err := exec.LookPath("varnishd")
	if err != nil {
		bin = "/usr/sbin/varnishd"
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("varnishd is not installed (make deps installs it)")
		}
		t.Skip("varnishd is not installed")
	}
	dir := t.TempDir()
	vclPath := filepath.Join(dir, "edge.vcl")
	if err := os.WriteFile(vclPath, []byte(edgeVCL(t, origin)), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "-F", "-j", "none", "-a", addr, "-f", vclPath, "-n", filepath.Join(dir, "work"), "-s", "malloc,32m",
		"-p", "default_grace=0")
	out, err := os.Create(filepath.Join(dir, "varnish.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close() // the child keeps its own descriptor
	cmd.Stdout, cmd.Stderr = out, out
	waited, err := chtest.StartChild(cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-waited })
	for deadline := time.Now().Add(20 * time.Second); ; {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(dir, "varnish.log"))
			t.Fatalf("varnishd did not start: %s", log)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// origin304s returns how many 304s the origin answered on a route.
func origin304s(t *testing.T, h *harness, route string) int {
	t.Helper()
	body := string(get(t, "GET", h.Base+"/metrics").body)
	var n int
	prefix := fmt.Sprintf(`edge_http_requests_total{route=%q,status="304"} `, route)
	for _, line := range strings.Split(body, "\n") {
		if strings.HasPrefix(line, prefix) {
			fmt.Sscan(strings.TrimPrefix(line, prefix), &n)
		}
	}
	return n
}

// TestBehindVarnish shows the legacy API working behind a real CDN: a
// repeated request is a cache hit, and once max-age has passed Varnish
// revalidates with If-None-Match and the origin answers 304.
func TestBehindVarnish(t *testing.T) {
	h := legacyEdge(t, func(c *edge.Config) { c.PublicMaxAge = time.Second })
	cdn := startVarnish(t, strings.TrimPrefix(h.Base, "http://"))
	fetch := func() (*http.Response, string) {
		resp, err := http.Get(cdn + "/api/extensions?platform=2")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp, resp.Header.Get("X-Cache")
	}
	first, cache := fetch()
	if first.StatusCode != 200 || cache != "MISS" {
		t.Fatalf("first request: %d %s", first.StatusCode, cache)
	}
	if second, cache := fetch(); second.StatusCode != 200 || cache != "HIT" || second.Header.Get("ETag") != first.Header.Get("ETag") {
		t.Fatalf("repeated request: %d %s", second.StatusCode, cache)
	}
	before := origin304s(t, h, "/api/extensions")
	time.Sleep(1500 * time.Millisecond) // past max-age
	deadline := time.Now().Add(10 * time.Second)
	for origin304s(t, h, "/api/extensions") == before {
		if time.Now().After(deadline) {
			t.Fatal("Varnish never revalidated with a 304 from the origin")
		}
		if resp, _ := fetch(); resp.StatusCode != 200 {
			t.Fatalf("stale request: %d", resp.StatusCode)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if resp, cache := fetch(); resp.StatusCode != 200 || cache != "HIT" {
		t.Errorf("after revalidation: %d %s", resp.StatusCode, cache)
	}
}

// TestPurgeByTagBehindVarnish: legacy answers carry cache tags, and an
// operator's purge of one tag at Varnish drops exactly the answers that
// carry it: a store's answers by the store's tag, every legacy answer by
// edge-legacy, every page for people by edge-page.
func TestPurgeByTagBehindVarnish(t *testing.T) {
	h := legacyEdge(t)
	cdn := startVarnish(t, strings.TrimPrefix(h.Base, "http://"))
	fetch := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get(cdn + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", path, resp.StatusCode)
		}
		return resp, resp.Header.Get("X-Cache")
	}
	purge := func(tag string) {
		t.Helper()
		req, _ := http.NewRequest("BAN", cdn+"/", nil)
		req.Header.Set("X-Purge-Tag", tag)
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("purge %s: %v %v", tag, resp, err)
		}
		resp.Body.Close()
	}
	chrome, summary := "/api/extensions?platform=0", "/api/summary"
	for _, path := range []string{chrome, summary} {
		fetch(path)
		if _, cache := fetch(path); cache != "HIT" {
			t.Fatalf("%s not cached: %s", path, cache)
		}
	}
	resp, _ := fetch(chrome)
	if got := resp.Header.Get("Surrogate-Key"); got != "edge edge-legacy api-extensions store-chrome" ||
		resp.Header.Get("Cache-Tag") != "edge,edge-legacy,api-extensions,store-chrome" {
		t.Fatalf("tags of %s: Surrogate-Key %q, Cache-Tag %q", chrome, got, resp.Header.Get("Cache-Tag"))
	}
	purge("store-chrome")
	if _, cache := fetch(chrome); cache != "MISS" {
		t.Fatalf("%s after purging store-chrome: %s", chrome, cache)
	}
	if _, cache := fetch(summary); cache != "HIT" {
		t.Fatalf("%s after purging store-chrome: %s, but it has no store", summary, cache)
	}
	// A page for people is kept too, and purged by edge-page alone.
	store := "/stores/chrome"
	fetch(store)
	resp, cache := fetch(store)
	if cache != "HIT" || resp.Header.Get("Surrogate-Key") != "edge edge-page page-stores" ||
		!strings.HasPrefix(resp.Header.Get("Cache-Control"), "public, max-age=60") {
		t.Fatalf("%s: %s, Surrogate-Key %q, Cache-Control %q", store, cache, resp.Header.Get("Surrogate-Key"), resp.Header.Get("Cache-Control"))
	}
	purge("edge-legacy")
	for _, path := range []string{chrome, summary} {
		if _, cache := fetch(path); cache != "MISS" {
			t.Fatalf("%s after purging edge-legacy: %s", path, cache)
		}
	}
	if _, cache := fetch(store); cache != "HIT" {
		t.Fatalf("%s after purging edge-legacy: %s", store, cache)
	}
	purge("edge-page")
	if _, cache := fetch(store); cache != "MISS" {
		t.Fatalf("%s after purging edge-page: %s", store, cache)
	}
}

// TestCompressionBehindVarnish: through Varnish, a client that accepts
// gzip and one that does not each get the right bytes from the one cached
// object (Varnish stores the origin's gzip and gunzips for the other), a
// brotli client gets the origin's brotli from an object of its own, and
// once max-age has passed the compressed objects are revalidated with a
// 304 from the origin.
func TestCompressionBehindVarnish(t *testing.T) {
	h := legacyEdge(t, func(c *edge.Config) { c.PublicMaxAge = time.Second })
	cdn := startVarnish(t, strings.TrimPrefix(h.Base, "http://"))
	const path = "/api/extensions?platform=1"
	plain := fetch(t, "GET", h.Base+path)
	if len(plain.raw) < 4<<10 {
		t.Fatalf("%s: %d bytes, want an answer worth compressing", path, len(plain.raw))
	}
	via := func(accept, wantEncoding, wantCache string) coded {
		t.Helper()
		a := fetch(t, "GET", cdn+path, "Accept-Encoding", accept)
		if a.status != 200 || a.header.Get("Content-Encoding") != wantEncoding || !bytes.Equal(a.decoded, plain.raw) {
			t.Fatalf("Accept-Encoding %q via Varnish: %d, Content-Encoding %q (want %q), %d bytes decoding to %d (want %d)",
				accept, a.status, a.header.Get("Content-Encoding"), wantEncoding, len(a.raw), len(a.decoded), len(plain.raw))
		}
		if wantCache != "" && a.header.Get("X-Cache") != wantCache {
			t.Fatalf("Accept-Encoding %q via Varnish: X-Cache %q, want %s", accept, a.header.Get("X-Cache"), wantCache)
		}
		if a.header.Get("ETag") != plain.header.Get("ETag") {
			t.Errorf("Accept-Encoding %q via Varnish: ETag %q, the origin's is %q", accept, a.header.Get("ETag"), plain.header.Get("ETag"))
		}
		return a
	}
	gz := via("gzip, deflate", "gzip", "MISS")
	if len(gz.raw) > len(plain.raw)/3 {
		t.Errorf("gzip via Varnish: %d of %d bytes", len(gz.raw), len(plain.raw))
	}
	via("gzip", "gzip", "HIT")
	via("", "", "HIT")         // gunzipped by Varnish from the same object
	via("identity", "", "HIT") // the same
	via("gzip, br", "br", "MISS")
	br := via("br", "br", "HIT")
	if len(br.raw) >= len(gz.raw) {
		t.Errorf("br via Varnish: %d bytes, gzip %d: brotli should be smaller", len(br.raw), len(gz.raw))
	}

	// Past max-age, each compressed object is revalidated: the origin
	// answers 304 and Varnish goes on serving the bytes it holds.
	for _, accept := range []string{"gzip", "br"} {
		before := origin304s(t, h, "/api/extensions")
		time.Sleep(1100 * time.Millisecond)
		for deadline := time.Now().Add(10 * time.Second); origin304s(t, h, "/api/extensions") == before; {
			if time.Now().After(deadline) {
				t.Fatalf("Varnish never revalidated its %s object with a 304 from the origin", accept)
			}
			via(accept, accept, "")
			time.Sleep(100 * time.Millisecond)
		}
		via(accept, accept, "HIT")
	}
}
