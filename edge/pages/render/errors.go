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
	return RenderSearchError(status, detail, retry, SearchForm{})
}

// SearchForm is what an error page's search form holds: the words
// searched for, and the listings browser's other filters, kept as they
// were sent (a search's error keeps the reader's filters).
type SearchForm struct {
	Q    string
	Keep []Option // hidden fields: Value is the name, Label the value
}

// RenderSearchError is RenderError whose search form holds form.
func RenderSearchError(status int, detail, retry string, form SearchForm) ([]byte, error) {
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
		Form   SearchForm
	}{Head: Head{Title: title + " · edge", Description: detail}, Title: title, Status: status, Detail: detail, Retry: retry, Form: form})
}

var errorPage = parse("error", map[string]any{"retryMinutes": func(s string) int {
	n, _ := strconv.Atoi(s)
	if n < 120 {
		return 0
	}
	return (n + 59) / 60
}})
