package page

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

var errorPage = parse("error", `<h1>{{.Title}}</h1>
<p>{{.Detail}}</p>
{{if .Retry}}<p>You can come back in {{if eq .Retry "1"}}a second{{else}}{{.Retry}} seconds{{end}}{{if retryMinutes .Retry}} (about {{retryMinutes .Retry}} minutes){{end}}.</p>{{end}}
<form method="get" action="/listings" role="search"><label for="q">Search listings by name or developer</label> <input id="q" name="q" size="20" minlength="2"> <button type="submit">Search</button></form>
<p>Or start from <a href="/">the stores</a>, <a href="/listings">every listing</a> or <a href="/events">the latest changes</a>.</p>
<p class="note">Status {{.Status}}.</p>`, map[string]any{"retryMinutes": func(s string) int {
	n, _ := strconv.Atoi(s)
	if n < 120 {
		return 0
	}
	return (n + 59) / 60
}})
