package problem

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
)

// TestHandler checks that every error a handler returns reaches the client
// as problem+json: a Problem with its headers, fiber's own errors (404,
// 405 with Allow) with a detail that says what to do, and any other error
// as a 500 that tells nothing of its cause.
func TestHandler(t *testing.T) {
	app := fiber.New(fiber.Config{ErrorHandler: Handler(slog.New(slog.DiscardHandler))})
	app.Get("/problem", func(*fiber.Ctx) error { return Newf(429, "Wait %d seconds.", 7).RetryAfter(7) })
	app.Get("/secret", func(*fiber.Ctx) error { return fmt.Errorf("dial 10.0.0.5: %w", errors.New("password=hunter2")) })
	for _, c := range []struct {
		method, path string
		status       int
		detail       string
		header       [2]string
	}{
		{"GET", "/problem", 429, "Wait 7 seconds.", [2]string{"Retry-After", "7"}},
		{"GET", "/nowhere", 404, "There is nothing at /nowhere", [2]string{}},
		{"POST", "/problem", 405, "POST is not allowed here; use one of: GET, HEAD", [2]string{"Allow", "GET, HEAD"}},
		{"GET", "/secret", 500, "The server failed to answer", [2]string{}},
	} {
		resp, err := app.Test(httptest.NewRequest(c.method, c.path, nil), -1)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		var p Problem
		if err := json.Unmarshal(body, &p); err != nil || resp.StatusCode != c.status || p.Status != c.status ||
			!strings.HasPrefix(p.Detail, c.detail) || p.Instance != c.path || p.Type != "about:blank" {
			t.Errorf("%s %s: %d %s", c.method, c.path, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s %s: Content-Type %q, Cache-Control %q", c.method, c.path, ct, resp.Header.Get("Cache-Control"))
		}
		if c.header[0] != "" && resp.Header.Get(c.header[0]) != c.header[1] {
			t.Errorf("%s %s: %s %q, want %q", c.method, c.path, c.header[0], resp.Header.Get(c.header[0]), c.header[1])
		}
		if strings.Contains(string(body), "hunter2") || strings.Contains(string(body), "10.0.0.5") {
			t.Errorf("%s %s: the cause leaked: %s", c.method, c.path, body)
		}
	}
}

func TestReadFailedAndSeconds(t *testing.T) {
	if p := ReadFailed("the history", context.DeadlineExceeded); p.Status != 503 || !strings.Contains(p.Detail, "time budget") || p.headers["Retry-After"] != "5" {
		t.Errorf("deadline: %+v", p)
	}
	if p := ReadFailed("the history", errors.New("connection refused")); !strings.HasPrefix(p.Detail, "The history cannot be read") {
		t.Errorf("refused: %+v", p)
	}
	for d, want := range map[time.Duration]int{0: 1, time.Millisecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, time.Minute: 60} {
		if got := Seconds(d); got != want {
			t.Errorf("Seconds(%v) = %d, want %d", d, got, want)
		}
	}
	if p := NotReady("Charts are"); p.Status != 503 || p.headers["Retry-After"] != "60" || !strings.HasPrefix(p.Detail, "Charts are computed") {
		t.Errorf("not ready: %+v", p)
	}
}
