// Package page renders the edge's HTML pages for people and their Atom
// feeds: the home page, a store's, a chart's, the categories and topics,
// the listings' browser, a listing's page (what a person opens from the
// url of a legacy CSV row or a shared link), a comparison, the weekly
// editions, the change events, the definitions of the figures, and the
// answer a browser gets when it is refused. They are plain pages, no
// script, usable without CSS, dark by the reader's preference: the
// figures the JSON answers give, with what they mean a link away, and
// inline SVG charts readable on a phone. Rendering is pure: the caller
// gives the figures and the series. Package guard puts every page behind
// the limits and headers that fit people in browsers.
package page

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"strconv"
	"strings"
)

// style is every page's style sheet, inline (one request a page); the
// Content-Security-Policy admits it by its hash alone.
const style = `:root{color-scheme:light dark;--fg:#1d232a;--muted:#4a5561;--bg:#fff;--line:#e3e7eb;--accent:#1a5fb4;--plot:#1a73e8;--grid:#e3e7eb;--ok:#1e6b34;--edge:rgba(0,0,0,.28);--okbg:#e6f4ea;--gone:#9a2b1b;--gonebg:#fbe9e7}
@media (prefers-color-scheme:dark){:root{--fg:#e6e9ed;--muted:#aab4be;--bg:#14181c;--line:#2c333a;--accent:#8ab4f8;--plot:#8ab4f8;--grid:#2c333a;--ok:#9bd4a9;--edge:rgba(255,255,255,.3);--okbg:#1d3324;--gone:#f2a99d;--gonebg:#3a1f1b}}
body{font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:46rem;padding:0 1rem;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
header,footer{font-size:.9rem;color:var(--muted);padding:.75rem 0}
header a{margin-right:.9rem;display:inline-block}
.skip{position:absolute;left:-999rem}.skip:focus{position:static;display:inline-block;margin:.5rem 0}
footer{border-top:1px solid var(--line);margin-top:1.5rem}
footer p{overflow-wrap:anywhere}
h1{font-size:1.5rem;line-height:1.25;margin:.25rem 0;overflow-wrap:anywhere}
h2{font-size:1.1rem;margin:1.25rem 0 .4rem}
.meta{color:var(--muted);margin:0 0 1rem}
.note,.why{color:var(--muted);font-size:.875rem}
.why{display:block;font-variant-numeric:normal}
.state{display:inline-block;font-size:.8rem;padding:.05rem .45rem;border-radius:.6rem;background:var(--okbg);color:var(--ok)}
.state.gone{background:var(--gonebg);color:var(--gone)}
table{border-collapse:collapse;width:100%;margin:.5rem 0 1rem}
th,td{text-align:left;padding:.4rem .25rem;border-bottom:1px solid var(--line);vertical-align:top}
th{font-weight:500}
td{text-align:right;font-variant-numeric:tabular-nums}
td.pos{text-align:left;color:var(--muted);width:2.5rem}
td.text,td[colspan]{text-align:left}
th.num{text-align:right}
caption{text-align:left;font-weight:600;padding:.5rem 0}
nav.tabs a{display:inline-block;margin:0 .8rem .4rem 0}
nav.tabs a[aria-current]{font-weight:700;text-decoration:none;color:var(--fg)}
.table{overflow-x:auto;margin:.5rem 0 1rem;background:linear-gradient(to right,var(--bg) 30%,transparent),linear-gradient(to left,var(--bg) 30%,transparent) 100% 0,radial-gradient(farthest-side at 0 50%,var(--edge),transparent),radial-gradient(farthest-side at 100% 50%,var(--edge),transparent) 100% 0;background-repeat:no-repeat;background-size:2.5rem 100%,2.5rem 100%,.8rem 100%,.8rem 100%;background-attachment:local,local,scroll,scroll}
.table>table{margin:0}
.table:focus-visible{outline:2px solid var(--accent);outline-offset:2px}
.field{display:inline-block;margin:0 .75rem .5rem 0}
form{margin:.5rem 0 1rem}
select,input,button{font:inherit;padding:.25rem .4rem}
dt{font-weight:600;margin-top:1rem}
dd{margin:.2rem 0 0}
.chart{width:100%;max-width:560px;height:auto;display:block}
.chart text{font-size:11.5px;fill:var(--muted)}
.chart .grid{stroke:var(--grid);stroke-width:1}
.chart .line{fill:none;stroke:var(--plot);stroke-width:2;stroke-linejoin:round}
.chart .dot{fill:var(--plot)}`

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
}

// Alternate is another form of a page's content.
type Alternate struct {
	Type, URL, Label string
}

// Int formats n for a person: 1234567 is "1,234,567".
func Int(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	if neg {
		return "−" + string(out)
	}
	return string(out)
}

// layout is every page's frame: the head, the site's links, the main
// content (the template "main" of each page) and the footer naming the
// page's other forms.
const layout = `{{define "layout"}}<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Head.Title}}</title>
<meta name="description" content="{{.Head.Description}}">
<link rel="icon" href="data:,">
{{range .Head.Alternates}}<link rel="alternate" type="{{.Type}}" href="{{.URL}}">
{{end}}<style>` + style + `</style>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header><nav aria-label="Site"><a href="/">Stores</a><a href="/listings">Listings</a><a href="/compare">Compare</a><a href="/events">Changes</a><a href="/weeks">Weeks</a><a href="/tags">Topics</a><a href="/definitions">What the figures mean</a><a href="/docs">API</a></nav></header>
<main id="main">
{{template "main" .}}
</main>
<footer>{{with .Head.Alternates}}<p>These figures as data: {{range $i, $a := .}}{{if $i}}, {{end}}<a href="{{$a.URL}}">{{$a.Label}}</a>{{end}}.</p>{{end}}
<p>Figures are rebuilt from the stores' crawls every few minutes.</p></footer>
</body>
</html>
{{end}}`

// parse returns a page's template: the layout, the shared parts (a list
// of listings) and its main.
func parse(name, main string, funcs template.FuncMap) *template.Template {
	t := template.New(name).Funcs(listFuncs).Funcs(funcs)
	t = template.Must(template.Must(t.Parse(layout)).Parse(listTemplate))
	return template.Must(t.Parse(`{{define "main"}}` + main + `{{end}}`))
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
