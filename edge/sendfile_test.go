package edge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"

	"github.com/edge-stats/edge/edge"
)

// TestLargeAnswersSentWhole checks the large-answer path (on Linux, a
// memfd sent with sendfile once the answer is cached): the first answer
// (encoded) and every later one (from the cache) are the same bytes, in
// every content coding, with the right Content-Length, under concurrent
// requests too; HEAD and 304 carry no body.
func TestLargeAnswersSentWhole(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/api/extensions?platform=0&pageSize=200", "/api/v1/listings?limit=100"} {
		first := get(t, "GET", h.Base+path)
		if first.status != 200 || len(first.body) < 64<<10 {
			t.Fatalf("%s: %d, %d bytes (want a large answer)", path, first.status, len(first.body))
		}
		var v any
		if err := json.Unmarshal(first.body, &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		var wg sync.WaitGroup
		for g := range 16 {
			wg.Go(func() {
				for i := range 8 {
					// Every coding, each sent whole (the larger compressed
					// ones by sendfile too).
					accept := []string{"identity", "gzip", "br", "zstd"}[(g+i)%4]
					a := fetch(t, "GET", h.Base+path, "Accept-Encoding", accept)
					if !bytes.Equal(a.decoded, first.body) || a.header.Get("Content-Length") != strconv.Itoa(len(a.raw)) {
						t.Errorf("%s in %s: %d bytes (Content-Length %s) decoding to %d; want the first answer's %d", path, accept,
							len(a.raw), a.header.Get("Content-Length"), len(a.decoded), len(first.body))
						return
					}
				}
			})
		}
		wg.Wait()
		head := get(t, "HEAD", h.Base+path)
		if head.status != 200 || len(head.body) != 0 || head.header.Get("Content-Length") != strconv.Itoa(len(first.body)) {
			t.Errorf("%s HEAD: %d, %d bytes, Content-Length %q", path, head.status, len(head.body), head.header.Get("Content-Length"))
		}
		req, _ := http.NewRequest("GET", h.Base+path, nil)
		req.Header.Set("If-None-Match", first.header.Get("ETag"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 304 || len(body) != 0 {
			t.Errorf("%s revalidated: %d with %d bytes", path, resp.StatusCode, len(body))
		}
	}
}

// TestRawIOOffAnswersTheSameBytes serves one published state from an edge
// with raw I/O (EDGE_RAW_IO=true, the default) and one without, and checks
// that every answer, large ones (sent by sendfile) and 304s included, has
// the same status, headers that matter and bytes.
func TestRawIOOffAnswersTheSameBytes(t *testing.T) {
	d := synthetic(t)
	raw := start(t, d)
	plain := start(t, d, func(c *edge.Config) { c.RawIO = false })
	if err := raw.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	plain.State.Publish(raw.State.Load())
	for _, path := range []string{"/api/v1/listings?limit=100", "/api/extensions?platform=0&pageSize=200", "/api/summary",
		"/api/v1/categories/chrome", "/api/extensions.csv", "/api/v1/listings/chrome/nope"} {
		a, b := get(t, "GET", raw.Base+path), get(t, "GET", plain.Base+path)
		for _, h := range []string{"Content-Type", "Content-Length", "ETag", "Cache-Control"} {
			if a.header.Get(h) != b.header.Get(h) {
				t.Errorf("%s: %s %q with raw I/O, %q without", path, h, a.header.Get(h), b.header.Get(h))
			}
		}
		if a.status != b.status || !bytes.Equal(a.body, b.body) {
			t.Errorf("%s: %d and %d bytes with raw I/O, %d and %d without", path, a.status, len(a.body), b.status, len(b.body))
		}
		if etag := a.header.Get("ETag"); etag != "" {
			req, _ := http.NewRequest("GET", plain.Base+path, nil)
			req.Header.Set("If-None-Match", etag)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 304 {
				t.Errorf("%s without raw I/O: the raw edge's ETag gives %d, want 304", path, resp.StatusCode)
			}
		}
	}
	if len(get(t, "GET", raw.Base+"/api/v1/listings?limit=100").body) < 64<<10 {
		t.Fatal("the large answer is not large: the sendfile path is not exercised")
	}
}
