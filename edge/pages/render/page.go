// Package render renders the edge's HTML pages for people and their Atom
// feeds (package pages answers them): the home page, a store's, a chart's, the categories and topics,
// the listings' browser, a listing's page (what a person opens from the
// url of a legacy CSV row or a shared link), a comparison, the weekly
// editions, the change events, the definitions of the figures, and the
// answer a browser gets when it is refused. They are plain pages, no
// script, usable without CSS, dark by the reader's preference: the
// figures the JSON answers give, with what they mean a link away, and
// inline SVG charts readable on a phone. Rendering is pure: the caller
// gives the figures and the series. The templates and the style sheet are
// files (templates/), parsed once at start; one set of formatting helpers
// (figures.go) writes integers, signed changes, ratings and percents the
// same way on every page.
package render

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"fmt"
	"html/template"
	"strings"
)

// templates holds every page's template and the style sheet, as files
// (templates/*.html, templates/style.css): the layout, the list of
// listings the pages share, and one file per page type, its "main".
//
//go:embed templates/*.html templates/style.css
var templates embed.FS

// file returns the embedded file name without the newline a text file
// ends with.
func file(name string) string {
	b, err := templates.ReadFile("templates/" + name)
	if err != nil {
		panic(fmt.Sprintf("page: the embedded %s: %v", name, err)) // a build without its templates
	}
	return strings.TrimSuffix(string(b), "\n")
}

// style is every page's style sheet, inline (one request a page); the
// Content-Security-Policy admits it by its hash alone.
var style = file("style.css")

// CSP is every page's Content-Security-Policy: nothing but its own inline
// style (by hash), its own links and forms, never framed. No script may
// run (script-src falls back to 'none'); connect-src 'self' lets a tool
// that audits the page from inside it (Lighthouse reads /robots.txt with
// a fetch in the page's context) reach the site, and gives a script, were
// one ever to run, nowhere else to send anything.
var CSP = func() string {
	sum := sha256.Sum256([]byte(style))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
}()

// Head is what every page's head says besides its style: its title, its
// description (what it shows, for a search engine and a shared link) and
// the other forms of its figures (JSON, CSV).
type Head struct {
	Title       string
	Description string
	Alternates  []Alternate
	// Compare is the comparison a reader is building (store:id,
	// comma-separated), which the header's search keeps; "" for none.
	Compare string
}

// Alternate is another form of a page's content.
type Alternate struct {
	Type, URL, Label string
}

// Files are the CSV and NDJSON forms of a list whose JSON is at jsonURL:
// the same read's files (format=), with the same filters and order, each
// label saying what a file holds (rows: "every category", "the first
// 10,000 listings").
//
// They link the page's own address (jsonURL without its /api/v1), which
// answers the same files: a reader's downloads count against the pages'
// limits, not the API's.
func Files(jsonURL, rows string) []Alternate {
	jsonURL = strings.TrimPrefix(jsonURL, "/api/v1")
	sep := "?"
	if strings.Contains(jsonURL, "?") {
		sep = "&"
	}
	return []Alternate{{"text/csv", jsonURL + sep + "format=csv", "as CSV (" + rows + ")"},
		{"application/x-ndjson", jsonURL + sep + "format=ndjson", "as NDJSON (" + rows + ")"}}
}

// parse returns the template of the page type name, parsed once at
// start: the layout (templates/layout.html: the head, the site's links,
// the page's main and the footer naming its other forms), the style
// sheet, the list of listings the pages share (templates/list.html: a
// table in a region that scrolls sideways when it is wider than the page,
// focusable and named by its caption; each figure carries its JSON value
// in data-figure and data-value, for the tests that hold pages to their
// JSON twins) and its own main (templates/<name>.html).
func parse(name string, funcs template.FuncMap) *template.Template {
	t := template.New(name).Funcs(listFuncs).Funcs(funcs)
	t = template.Must(t.Parse(file("layout.html")))
	t = template.Must(t.Parse(`{{define "style"}}` + style + `{{end}}`))
	t = template.Must(t.Parse(file("list.html")))
	return template.Must(t.Parse(`{{define "main"}}` + file(name+".html") + `{{end}}`))
}

// execute renders t's layout with v.
func execute(t *template.Template, v any) ([]byte, error) {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, "layout", v); err != nil {
		return nil, fmt.Errorf("render the page %s: %w", t.Name(), err)
	}
	return b.Bytes(), nil
}

// Robots is the site's /robots.txt: every page is open to crawlers (the
// pages' per-address bound holds each one, however many addresses of
// parameters it tries); the API, the tool server and the operators'
// routes are for programs.
const Robots = `# Pages for people are open to crawlers within their per-address bound
# (docs/pages.md). The API is for programs: /api/v1/openapi.json describes it.
User-agent: *
Disallow: /api/
Disallow: /mcp
Disallow: /metrics
Disallow: /readyz
`
