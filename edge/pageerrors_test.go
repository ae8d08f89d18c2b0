package edge_test

import (
	"bytes"
	"encoding/json"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/views"
)

// apiWords finds the API's words in a page's text: its paths (/api/...,
// /v1/, a path template's {store}), parameters as a query writes them
// (?q=, &limit=) or as a problem's detail names them (q:, cursor:), its
// JSON field names (camelCase, growth.7d) and the vocabulary of HTTP
// and its formats.
var apiWords = regexp.MustCompile(`/api\b|/v1/|\{[a-z]+\}|[?&][A-Za-z]+=|\b[a-z]+[A-Z][A-Za-z]*\b|\bgrowth\.\d|` +
	`\b(q|limit|cursor|sort|order|store|category|tag|days|listings|kind|since|permission|chart|from|to|alsoIn|minSize|maxSize)[:=]|` +
	`\b(JSON|RFC|yyyy|Retry-After|Authorization|Bearer|Accept|openapi|store:id)\b`)

// pageMain is a page's <main>.
var pageMain = regexp.MustCompile(`(?s)<main id="main">(.*)</main>`)

// pageMeta is a page's title and description.
var pageMeta = regexp.MustCompile(`<title>([^<]*)</title>\s*<meta name="description" content="([^"]*)">`)

// readerErrorPage fails t unless r, the answer to a browser's request for
// u, is the HTML page of status want: its title, description and content
// free of the API's words, with the search form and links to the stores
// and to every listing in its content, and its text saying says.
func readerErrorPage(t *testing.T, u string, r answer, want int, says string) {
	t.Helper()
	if r.status != want || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("%s: %d %s, want a page of %d: %.300s", u, r.status, r.header.Get("Content-Type"), want, r.body)
		return
	}
	main, meta := pageMain.FindSubmatch(r.body), pageMeta.FindSubmatch(r.body)
	if main == nil || meta == nil {
		t.Errorf("%s: no main, title or description: %.300s", u, r.body)
		return
	}
	text := html.UnescapeString(string(bytes.Join([][]byte{meta[1], meta[2], tagsOf.ReplaceAll(main[1], []byte(" "))}, []byte("\n"))))
	if w := apiWords.FindAllString(text, -1); w != nil {
		t.Errorf("%s: the page says the API's words %q: %s", u, w, text)
	}
	if !strings.Contains(text, says) {
		t.Errorf("%s: the page does not say %q: %s", u, says, text)
	}
	for _, part := range []string{`<form method="get" action="/listings" role="search">`, `<a href="/">`, `<a href="/listings">`} {
		if !bytes.Contains(main[1], []byte(part)) {
			t.Errorf("%s: the page's content lacks %s", u, part)
		}
	}
}

// tagsOf finds HTML tags.
var tagsOf = regexp.MustCompile(`<[^>]*>`)

// TestPageErrorsInReadersWords: every error a page route gives a browser
// (a listing, store, topic, category, week or page that does not exist;
// a search, sort, order, page size, link to a further page, comparison or
// week the pages cannot read; a method the pages do not take; an address
// too long; figures not built yet) is a page in a reader's words, with
// no API path, parameter or field name in its text, with the search form
// and links to start again; the API's answer to the same request keeps
// its problem+json, whose detail names what to change in the API's
// terms.
func TestPageErrorsInReadersWords(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	browser := map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
	// Before the figures are built, their pages say so.
	for _, u := range []string{"/charts/chrome", "/stores/chrome", "/tags", "/listings", "/weeks"} {
		r := call(t, "GET", h.Base+u, browser, "")
		readerErrorPage(t, u, r, 503, "not ready yet")
		if !bytes.Contains(r.body, []byte("come back in")) || r.header.Get("Retry-After") == "" {
			t.Errorf("%s: a refusal that does not say when to come back: %v", u, r.header)
		}
	}
	for _, job := range []string{"views", "editions"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	l := firstLive(t, h, views.Chrome)
	one := "chrome:" + l.ID
	for _, c := range []struct {
		url    string
		status int
		says   string
	}{
		{"/nosuchpage", 404, "no page at this address"},
		{"/listings/chrome/" + l.ID + "/nosuch", 404, "no page at this address"},
		{"/listings/chrome/nosuchlisting", 404, `no listing "nosuchlisting" in the chrome store`},
		{"/listings/nostore/x", 404, `no store "nostore"`},
		{"/listings/chrome/nosuchlisting/changes.atom", 404, `no listing "nosuchlisting"`},
		{"/stores/nostore", 404, `no store "nostore"`},
		{"/categories/nostore", 404, `no store "nostore"`},
		{"/charts/nostore", 404, `no store "nostore"`},
		{"/charts/chrome?chart=nope", 400, `no chart "nope"`},
		{"/charts/chrome?category=nosuch", 404, `no category "nosuch"`},
		{"/tags/nosuchtopic/chrome", 404, `no topic "nosuchtopic"`},
		{"/tags/x/nostore", 404, `no store "nostore"`},
		{"/listings?q=a", 400, "search with 2 or more letters"},
		{"/listings?sort=nope", 400, `cannot be sorted by "nope"`},
		{"/listings?sort=rankclimb", 400, "needs a store chosen"},
		{"/listings?order=up", 400, "largest first or smallest first"},
		{"/listings?store=nostore", 400, `no store "nostore"`},
		{"/listings?category=nosuch", 404, `a category "nosuch"`},
		{"/listings?tag=nosuch", 404, `no topic "nosuch"`},
		{"/listings?minSize=5", 400, "needs a store"},
		{"/listings?store=chrome&minSize=-1", 400, "a number of 0 or more"},
		{"/listings?minRating=9", 400, "“rating from” takes a number from 0 to 5"},
		{"/listings?kind=plugin", 400, "“type” takes extension, theme or app"},
		{"/listings?hostAccess=some", 400, "“site access” takes all"},
		{"/listings?updatedAfter=2026-13-01", 400, "“updated from” takes a date such as 2026-03-01"},
		{"/listings?limit=0", 400, "1 to 100 listings"},
		{"/listings?cursor=xyz", 400, "Start again from the first page"},
		{"/compare?listings=a,b,c,d,e,f,g,h,i,j,k", 400, "2 to 10 listings"}, // fewer than two is the form (TestCompareYouCanReach)
		{"/compare?listings=x,y", 400, `"x" names no listing`},
		// One listing is the form that adds a second, but only for a
		// listing there is: an unknown one is named, not dropped.
		{"/compare?listings=chrome:nosuch", 404, `no listing "nosuch" in the chrome store`},
		{"/compare?listings=nostore:x", 400, `"nostore:x" names no listing`},
		{"/compare?listings=" + one + "," + one, 400, "twice"},
		{"/compare?listings=" + one + ",chrome:nosuch", 404, `no listing "nosuch" in the chrome store`},
		{"/compare?listings=" + one + ",edge:x", 404, `no listing "x" in the edge store`},
		{"/events?store=nostore", 400, `no store "nostore"`},
		{"/events?kind=nope", 400, `no kind of change "nope"`},
		{"/events?cursor=xyz", 400, "Start again from the first page"},
		{"/events?permission=" + strings.Repeat("x", 201), 400, "not that long"},
		{"/events?kind=version&permission=tabs", 400, "changes of permissions"},
		{"/events.atom?store=nostore", 400, `no store "nostore"`},
		{"/week/nope", 400, "such as 2026-W05"},
		{"/week/2026-W60", 400, "such as 2026-W05"},
		{"/week/2020-W01", 404, "no edition of week 2020-W01"},
		{"/" + strings.Repeat("x", 9000), 414, "too long"},
	} {
		readerErrorPage(t, c.url, call(t, "GET", h.Base+c.url, browser, ""), c.status, c.says)
	}
	days := "/compare?days=0&listings=" + one + ",edge:" + firstLive(t, h, views.Edge).ID
	readerErrorPage(t, days, call(t, "GET", h.Base+days, browser, ""), 400, "covers 1 to 730 days")
	for _, m := range []string{"POST", "DELETE"} {
		readerErrorPage(t, m+" /listings", call(t, m, h.Base+"/listings", browser, ""), 405, "can only be opened")
	}
	// The API answers the same mistakes in its own terms, whatever the
	// Accept, and a program's unknown page is problem+json.
	for u, detail := range map[string]string{
		"/api/v1/listings?q=a":                     "q: ",
		"/api/v1/listings/chrome/nosuch":           "/api/v1/listings?store=chrome",
		"/api/v1/charts/chrome?chart=nope":         "chart: ",
		"/api/v1/compare?listings=" + one:          "listings: ",
		"/api/v1/nosuch":                           "/api/v1/openapi.json",
		"/nosuchpage":                              "/api/v1/openapi.json",
		"/api/v1/events?cursor=xyz":                "nextCursor",
		"/api/v1/tags/nosuchtopic/chrome":          "/api/v1/tags",
		"/api/v1/week/nope":                        "2026-W05",
		"/api/v1/listings?sort=nope&limit=1":       "sort: ",
		"/api/v1/categories/nostore":               "unknown store",
		"/api/v1/listings?store=chrome&minSize=-1": "minSize: ",
	} {
		hdr := browser
		if !strings.HasPrefix(u, "/api/") {
			hdr = map[string]string{"Accept": "application/json"}
		}
		r := call(t, "GET", h.Base+u, hdr, "")
		var p struct{ Detail string }
		if r.header.Get("Content-Type") != "application/problem+json" || json.Unmarshal(r.body, &p) != nil || !strings.Contains(p.Detail, detail) {
			t.Errorf("%s: %d %s, want problem+json whose detail names %q: %s", u, r.status, r.header.Get("Content-Type"), detail, r.body)
		}
	}
}
