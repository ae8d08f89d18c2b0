package guard_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/pages/guard"
	"github.com/edge-stats/edge/edge/problem"
)

// TestErrorPagesInReadersWords: a page's error shows the problem's
// reader's text, or its status's, and never its detail; the app's error
// handler (Pages) gives a browser a page outside the programs' paths and
// everyone else problem+json.
func TestErrorPagesInReadersWords(t *testing.T) {
	detail := "q: see /api/v1/openapi.json for nextCursor"
	app := fiber.New(fiber.Config{ErrorHandler: guard.Pages(slog.New(slog.DiscardHandler), problem.Handler(slog.New(slog.DiscardHandler)))})
	app.Get("/own", func(c *fiber.Ctx) error {
		return guard.Error(c, problem.New(http.StatusBadRequest, detail).ForReaders("Search with 2 or more letters."))
	})
	for _, status := range []int{400, 404, 405, 406, 414, 429, 500, 503, 418} {
		app.Get("/status/"+strconv.Itoa(status), func(c *fiber.Ctx) error {
			return guard.Error(c, problem.New(status, detail))
		})
	}
	app.Get("/fails", func(*fiber.Ctx) error { return io.ErrUnexpectedEOF })
	app.Get("/api/v1/x", func(*fiber.Ctx) error { return problem.New(http.StatusBadRequest, detail) })
	html := "text/html,application/xhtml+xml,*/*;q=0.8"
	for _, c := range []struct {
		method, path, accept string
		status               int
		page                 bool
		says                 string
	}{
		{"GET", "/own", html, 400, true, "Search with 2 or more letters."},
		{"GET", "/status/400", html, 400, true, "not one these pages understand"},
		{"GET", "/status/404", html, 404, true, "no page at this address"},
		{"GET", "/status/414", html, 414, true, "too long"},
		{"GET", "/status/429", html, 429, true, "slow down"},
		{"GET", "/status/503", html, 503, true, "busy"},
		{"GET", "/status/418", html, 418, true, "cannot be shown"},
		{"GET", "/nosuchpage", html, 404, true, "no page at this address"},
		{"POST", "/own", html, 405, true, "can only be opened"},
		{"GET", "/fails", html, 500, true, "failed to make this page"},
		{"GET", "/nosuchpage", "application/json", 404, false, "/api/v1/openapi.json"},
		{"GET", "/api/v1/x", html, 400, false, detail},
		{"GET", "/api/v1/nosuch", html, 404, false, "/api/v1/openapi.json"},
		{"GET", "/account/nosuch", html, 404, false, "/api/v1/openapi.json"},
	} {
		req := httptest.NewRequest(c.method, c.path, nil)
		req.Header.Set("Accept", c.accept)
		resp, err := app.Test(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		body := string(b)
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode != c.status || strings.HasPrefix(ct, "text/html") != c.page || !strings.Contains(body, c.says) {
			t.Errorf("%s %s: %d %s, want %d (a page: %v) saying %q: %.400s", c.method, c.path, resp.StatusCode, ct, c.status, c.page, c.says, body)
		}
		if c.page && (strings.Contains(body, "/api/") || strings.Contains(body, "nextCursor") || !strings.Contains(body, `role="search"`)) {
			t.Errorf("%s %s: a page with the API's detail, or without the search form: %s", c.method, c.path, body)
		}
	}
}
