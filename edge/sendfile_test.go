package edge_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
)

// TestLargeAnswersSentWhole checks the large-answer path (on Linux, a
// memfd sent with sendfile once the answer is cached): the first answer
// (encoded) and every later one (from the cache) are the same bytes, with
// the right Content-Length, under concurrent requests too; HEAD and 304
// carry no body.
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
		for range 16 {
			wg.Go(func() {
				for range 8 {
					resp, err := http.Get(h.Base + path)
					if err != nil {
						t.Error(err)
						return
					}
					body, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || !bytes.Equal(body, first.body) || resp.ContentLength != int64(len(first.body)) {
						t.Errorf("%s: %d bytes (Content-Length %d), err %v; want the first answer's %d", path, len(body), resp.ContentLength, err, len(first.body))
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
