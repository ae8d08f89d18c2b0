package page

import "html/template"

// Entry is one listing in a list of a page: its place, its name and
// developer, the address of its page, and the list's figures of it, in
// the list's column order.
type Entry struct {
	Position        int
	Name, Developer string
	URL             string
	Figures         []Figure
}

// Column is a column of a list: its label and the definition its figures
// follow (an anchor of /definitions).
type Column struct {
	Label, Definition string
}

// List is a ranked list of listings (a chart, or its top on another
// page): a caption, the address of the whole list, its columns and
// entries, and what to say when it has none.
type List struct {
	Caption string
	URL     string // the whole list's page ("" on the list's own page)
	Columns []Column
	Entries []Entry
	Empty   string
}

// Link is a link of a page's navigation.
type Link struct {
	Label, URL string
	Current    bool
}

// listTemplate renders a List as a table in a region that scrolls
// sideways when the table is wider than the page (focusable, to scroll
// by keyboard, and named by the caption): the listings' names link to
// their pages, each figure carries its JSON value (data-figure,
// data-value) for the tests that hold pages to their JSON twins.
const listTemplate = `{{define "list"}}<div class="table" role="region" tabindex="0" aria-label="{{.Caption}}"><table>
<caption>{{.Caption}}{{if .URL}} · <a href="{{.URL}}">all</a>{{end}}</caption>
<thead><tr><th scope="col">#</th><th scope="col">Listing</th>{{range .Columns}}<th scope="col" class="num"><a href="/definitions#{{.Definition}}">{{.Label}}</a></th>{{end}}</tr></thead>
<tbody>
{{range .Entries}}<tr><td class="pos">{{.Position}}</td><th scope="row"><a href="{{.URL}}">{{.Name}}</a>{{if .Developer}}<span class="why">{{.Developer}}</span>{{end}}</th>{{range .Figures}}<td data-figure="{{.Definition}}" data-value="{{.Raw}}">{{if .Text}}{{.Text}}{{else}}—{{end}}</td>{{end}}</tr>
{{else}}<tr><td colspan="{{add 2 (len .Columns)}}">{{.Empty}}</td></tr>
{{end}}</tbody>
</table></div>{{end}}
{{define "fig"}}<td data-figure="{{.Definition}}" data-value="{{.Raw}}">{{if .Text}}{{.Text}}{{else}}—{{if .Why}}<span class="why">{{.Why}}</span>{{end}}{{end}}</td>{{end}}`

var listFuncs = template.FuncMap{"add": func(a, b int) int { return a + b }}
