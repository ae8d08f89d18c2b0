package answer

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// TestSendConditional checks each rule of RFC 9110 section 13.2.2 that
// Send applies: If-None-Match first (weak comparison), If-Modified-Since
// only without it, an invalid date ignored; HEAD as GET; Last-Modified and
// ETag on 200 and 304 alike.
func TestSendConditional(t *testing.T) {
	modified := time.Date(2026, 11, 1, 6, 30, 15, 0, time.UTC)
	c, err := NewCache(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	c.SetModified(func() time.Time { return modified.Add(400 * time.Millisecond) }) // to the second
	a, err := c.Get(NewKey(nil, "/r", 1), func() (*Answer, error) { return JSON(map[string]string{"a": "b"}) })
	if err != nil {
		t.Fatal(err)
	}
	if !a.Modified().Equal(modified) {
		t.Fatalf("Modified %v, want %v", a.Modified(), modified)
	}
	app := fiber.New()
	app.Get("/r", Responder{}.Handle(func(*fiber.Ctx) (Reply, error) { return Reply{Answer: a, CacheControl: Private}, nil }))
	lm := "Sun, 01 Nov 2026 06:30:15 GMT"
	for _, tc := range []struct {
		name   string
		method string
		hdr    map[string]string
		want   int
	}{
		{"plain", "GET", nil, 200},
		{"same date", "GET", map[string]string{"If-Modified-Since": lm}, 304},
		{"later date", "GET", map[string]string{"If-Modified-Since": "Sun, 01 Nov 2026 06:30:16 GMT"}, 304},
		{"earlier date", "GET", map[string]string{"If-Modified-Since": "Sun, 01 Nov 2026 06:30:14 GMT"}, 200},
		{"RFC 850 date", "GET", map[string]string{"If-Modified-Since": "Sunday, 01-Nov-26 06:30:15 GMT"}, 304},
		{"asctime date", "GET", map[string]string{"If-Modified-Since": "Sun Nov  1 06:30:15 2026"}, 304},
		{"not a date", "GET", map[string]string{"If-Modified-Since": "yesterday"}, 200},
		{"etag matches", "GET", map[string]string{"If-None-Match": a.ETag}, 304},
		{"etag wins over a matching date", "GET", map[string]string{"If-None-Match": `W/"other"`, "If-Modified-Since": lm}, 200},
		{"etag wins over an old date", "GET", map[string]string{"If-None-Match": a.ETag, "If-Modified-Since": "Sat, 01 Jan 2000 00:00:00 GMT"}, 304},
		{"HEAD", "HEAD", nil, 200},
		{"HEAD same date", "HEAD", map[string]string{"If-Modified-Since": lm}, 304},
	} {
		req := httptest.NewRequest(tc.method, "/r", nil)
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != tc.want || resp.Header.Get("Last-Modified") != lm || resp.Header.Get("ETag") != a.ETag {
			t.Errorf("%s: %d (want %d), Last-Modified %q, ETag %q", tc.name, resp.StatusCode, tc.want, resp.Header.Get("Last-Modified"), resp.Header.Get("ETag"))
		}
		if (resp.StatusCode == http.StatusNotModified || tc.method == "HEAD") && len(body) != 0 {
			t.Errorf("%s: a body of %d bytes", tc.name, len(body))
		}
	}

	// An answer without a date (before any state) and a partial one have
	// no Last-Modified, and a date alone never makes them 304.
	none := New([]byte("x"), fiber.MIMETextPlain)
	partial, _ := Search(map[string]bool{"partial": true}, true)
	partial.SetModified(modified)
	for name, b := range map[string]*Answer{"no date": none, "partial": partial} {
		app := fiber.New()
		app.Get("/r", Responder{}.Handle(func(*fiber.Ctx) (Reply, error) { return Reply{Answer: b, CacheControl: Private}, nil }))
		req := httptest.NewRequest("GET", "/r", nil)
		req.Header.Set("If-Modified-Since", lm)
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Header.Get("Last-Modified") != "" {
			t.Errorf("%s: %d, Last-Modified %q", name, resp.StatusCode, resp.Header.Get("Last-Modified"))
		}
	}
}
