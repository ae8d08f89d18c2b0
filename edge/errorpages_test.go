package edge_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge"
)

// apiWords are what an error page must not say to a reader: the API's
// paths and its query parameters.
var apiWords = regexp.MustCompile(`/api/|/v1/|[?&][a-zA-Z]+=|\b(?:limit|cursor|offset|parameter|JSON)\b`)

// TestErrorPagesSpeakToReaders (issue 66, 3.4): every error a page route
// gives (an unknown listing, store, category, topic, week or page; a
// search too short; a bad sort, cursor or date) is a page in a reader's
// words: its status, what went wrong with no API path, parameter or
// field name, the search form and a way back to the stores.
func TestErrorPagesSpeakToReaders(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	browser := map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
	tags := regexp.MustCompile(`<[^>]*>`)
	for _, path := range []string{
		"/listings/chrome/nosuchlistingnosuchlistingnosuch",
		"/listings/nostore/x",
		"/no/such/page",
		"/charts/nostore",
		"/charts/chrome?chart=nosuchchart",
		"/charts/chrome?category=nosuchcategory",
		"/tags/nosuchtopic/chrome",
		"/weeks/1999-W01",
		"/listings?q=a",
		"/listings?sort=nosuchsort",
		"/listings?store=nostore",
		"/listings?cursor=garbage",
		"/listings?limit=100000",
		"/compare?listings=chrome:x",
		"/stores/nostore",
	} {
		r := call(t, "GET", h.Base+path, browser, "")
		body := string(r.body)
		if r.status < 400 || r.status >= 500 {
			t.Errorf("%s: %d, want an error of the request", path, r.status)
			continue
		}
		if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Errorf("%s: %d as %s, want a page", path, r.status, r.header.Get("Content-Type"))
			continue
		}
		main := body
		if i := strings.Index(body, `<main id="main">`); i >= 0 {
			main = body[i:]
		}
		if end := strings.Index(main, "</main>"); end >= 0 {
			main = main[:end]
		}
		text := tags.ReplaceAllString(main, " ")
		if w := apiWords.FindString(text); w != "" {
			t.Errorf("%s (%d) says %q, the API's words: %s", path, r.status, w, strings.Join(strings.Fields(text), " "))
		}
		if !strings.Contains(body, `<form method="get" action="/listings" role="search">`) || !strings.Contains(main, `href="/"`) {
			t.Errorf("%s (%d): no search form or no way back to the stores", path, r.status)
		}
	}
}
