package render

import (
	"net/http"
	"strconv"
)

// RenderError returns the page of an error: its status, what happened and
// what to do (detail), and when to come back (retry, seconds; "" for
// none). A person in a browser gets it where an API client gets
// problem+json.
func RenderError(status int, detail, retry string) ([]byte, error) {
	title := http.StatusText(status)
	if status == http.StatusTooManyRequests {
		title = "Please slow down"
	}
	return execute(errorPage, struct {
		Head   Head
		Title  string
		Status int
		Detail string
		Retry  string
	}{Head: Head{Title: title + " · edge", Description: detail}, Title: title, Status: status, Detail: detail, Retry: retry})
}

var errorPage = parse("error", map[string]any{"retryMinutes": func(s string) int {
	n, _ := strconv.Atoi(s)
	if n < 120 {
		return 0
	}
	return (n + 59) / 60
}})
