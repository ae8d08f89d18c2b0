// Package page renders the HTML page of one listing: what a person opens
// from the url of a legacy CSV row or a shared link. It is a plain page,
// no script: the listing's name, store and developer, its current figures
// (each linked to its definition) and an inline SVG chart of its size
// over the last year, readable on a phone. Rendering is pure: the caller
// gives the figures and the series.
package page

import (
	"bytes"
	"fmt"
	"html/template"
	"strconv"
	"strings"
)

// Figure is one figure of the page: its definition's name (the key of
// GET /api/v1/definitions), a label, its value as the JSON document
// gives it (Raw; "" for null) and as a person reads it (Text).
type Figure struct {
	Definition string
	Label      string
	Raw        string
	Text       string
}

// Point is one day of the size chart: the day (yyyy-MM-dd) and the day's
// size; Has is false on a day without one.
type Point struct {
	Day  string
	Size int64
	Has  bool
}

// Data is what a page shows.
type Data struct {
	Store, ID   string
	Name        string
	Developer   string
	Category    string
	SizeMeasure string // what size counts in the store (users, installs, ratings)
	Live        bool
	Figures     []Figure
	Points      []Point // oldest first
	// Links: the listing's JSON document, its history as CSV, the
	// figures' definitions.
	DocumentURL, HistoryURL, DefinitionsURL string
}

// Render returns the page of d.
func Render(d Data) ([]byte, error) {
	var b bytes.Buffer
	if err := tmpl.Execute(&b, view{Data: d, Chart: chart(d.Points, d.SizeMeasure)}); err != nil {
		return nil, fmt.Errorf("render the page of %s/%s: %w", d.Store, d.ID, err)
	}
	return b.Bytes(), nil
}

// view is what the template reads.
type view struct {
	Data
	Chart template.HTML
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

// chart draws the size series as an inline SVG: a line through the days
// with a size (a gap where days have none), the largest and smallest
// sizes on the left and the first and last days below. It is drawn in a
// viewBox, so that it scales to the screen's width.
func chart(points []Point, measure string) template.HTML {
	const w, h, left, bottom, top = 600.0, 260.0, 84.0, 30.0, 12.0
	var lo, hi int64
	n := 0
	for _, p := range points {
		if !p.Has {
			continue
		}
		if n == 0 || p.Size < lo {
			lo = p.Size
		}
		if n == 0 || p.Size > hi {
			hi = p.Size
		}
		n++
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s over the last %d days">`, w, h, template.HTMLEscapeString("Size ("+measure+")"), len(points))
	if n == 0 {
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">No size was read in these days.</text></svg>`, w/2, h/2)
		return template.HTML(b.String())
	}
	span := float64(hi - lo)
	if span == 0 {
		span = 1
	}
	x := func(i int) float64 {
		if len(points) == 1 {
			return left
		}
		return left + float64(i)*(w-left-4)/float64(len(points)-1)
	}
	y := func(v int64) float64 { return top + (h-top-bottom)*(1-float64(v-lo)/span) }
	fmt.Fprintf(&b, `<line class="axis" x1="%g" y1="%g" x2="%g" y2="%g"/>`, left, h-bottom, w, h-bottom)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end">%s</text>`, left-8, y(hi)+7, Int(hi))
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end">%s</text>`, left-8, y(lo)+7, Int(lo))
	fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text>`, left, h-6, points[0].Day)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="end">%s</text>`, w-4, h-6, points[len(points)-1].Day)
	var path strings.Builder
	pen := false
	for i, p := range points {
		if !p.Has {
			pen = false
			continue
		}
		cmd := "L"
		if !pen {
			cmd = "M"
		}
		fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, x(i), y(p.Size))
		pen = true
	}
	fmt.Fprintf(&b, `<path class="line" d="%s"/>`, strings.TrimSpace(path.String()))
	if n == 1 {
		for i, p := range points {
			if p.Has {
				fmt.Fprintf(&b, `<circle class="dot" cx="%.1f" cy="%.1f" r="3"/>`, x(i), y(p.Size))
			}
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var tmpl = template.Must(template.New("page").Funcs(template.FuncMap{"last": func(p []Point) int { return len(p) - 1 }}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Name}} · {{.Store}}</title>
<style>
body{font:16px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;max-width:46rem;padding:1rem;color:#1d232a;background:#fff}
h1{font-size:1.5rem;margin:.2rem 0}
h2{font-size:1.05rem;margin:1rem 0 .4rem}
.meta{color:#4a5561;margin:0 0 1rem}
.state{display:inline-block;font-size:.8rem;padding:.05rem .45rem;border-radius:.6rem;background:#e6f4ea;color:#1e6b34}
.state.gone{background:#fbe9e7;color:#9a2b1b}
table{border-collapse:collapse;width:100%;margin:1rem 0}
th,td{text-align:left;padding:.35rem .25rem;border-bottom:1px solid #e3e7eb;vertical-align:top}
td{text-align:right;font-variant-numeric:tabular-nums}
th a{color:inherit;text-decoration-color:#b6c0ca}
.chart{width:100%;height:auto;display:block}
.chart text{font-size:20px;fill:#4a5561}
.chart .axis{stroke:#c9d1d9}
.chart .line{fill:none;stroke:#1a73e8;stroke-width:2}
.chart .dot{fill:#1a73e8}
footer{font-size:.85rem;color:#4a5561;margin-top:1.5rem}
footer a{color:#1a5fb4}
</style>
</head>
<body>
<h1>{{.Name}}</h1>
<p class="meta">{{.Developer}} · {{.Store}}{{if .Category}} · {{.Category}}{{end}} {{if .Live}}<span class="state">live</span>{{else}}<span class="state gone">not live</span>{{end}}</p>
<h2>Size ({{.SizeMeasure}}), daily, {{if .Points}}{{(index .Points 0).Day}} to {{(index .Points (last .Points)).Day}}{{end}}</h2>
{{.Chart}}
<table>
{{range .Figures}}<tr><th scope="row"><a href="{{$.DefinitionsURL}}#{{.Definition}}">{{.Label}}</a></th><td data-figure="{{.Definition}}" data-value="{{.Raw}}">{{if .Text}}{{.Text}}{{else}}—{{end}}</td></tr>
{{end}}</table>
<footer>
<p>The same figures as JSON: <a href="{{.DocumentURL}}">{{.DocumentURL}}</a>; the daily history as CSV: <a href="{{.HistoryURL}}">{{.HistoryURL}}</a>. What each figure means: <a href="{{.DefinitionsURL}}">{{.DefinitionsURL}}</a>.</p>
</footer>
</body>
</html>
`))
