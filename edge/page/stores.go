package page

// ChartPage is what a chart's page shows.
type ChartPage struct {
	Store, Chart, Title string
	Category            string // "" for the whole store
	Charts              []Link // the store's charts
	Categories          []Link // the store's categories: the chart of each
	Window              string // the instants a chart of a window ranks between, in words
	Note                string
	List                List
	JSONURL             string
}

// RenderChart returns a chart's page.
func RenderChart(d ChartPage) ([]byte, error) {
	where := d.Store
	if d.Category != "" {
		where = d.Category + " in " + d.Store
	}
	return execute(chartPage, struct {
		ChartPage
		Head Head
	}{d, Head{
		Title:       d.Title + " · " + where + " · charts",
		Description: "The " + d.Title + " chart of " + where + ": up to 100 live listings with the figure each is ranked by. " + d.Note,
		Alternates:  []Alternate{{"application/json", d.JSONURL, "the chart as JSON"}},
	}})
}

var chartPage = parse("chart", `<h1>{{.Title}}: {{if .Category}}{{.Category}} in {{end}}{{.Store}}</h1>
<nav class="tabs" aria-label="Charts">{{range .Charts}}<a href="{{.URL}}"{{if .Current}} aria-current="page"{{end}}>{{.Label}}</a>{{end}}</nav>
{{if .Categories}}<form method="get" action="/charts/{{.Store}}"><input type="hidden" name="chart" value="{{.Chart}}">
<span class="field"><label for="category">Category</label> <select id="category" name="category"><option value="">the whole store</option>{{range .Categories}}<option value="{{.Label}}"{{if .Current}} selected{{end}}>{{.Label}}</option>{{end}}</select></span>
<button type="submit">Show</button></form>{{end}}
{{if .Window}}<p>{{.Window}}</p>{{end}}
{{template "list" .List}}
<p class="note">{{.Note}}</p>`, nil)

// StorePage is what a store's page shows: its statistics, the top of each
// chart, its categories.
type StorePage struct {
	Store      string
	AsOf       string
	Figures    []Figure
	Charts     []List
	Categories []Category
	JSONURL    string
}

// Category is a category of a store with its live listings, linking to
// its chart.
type Category struct {
	Name     string
	Listings int
	URL      string
}

// RenderStore returns a store's page.
func RenderStore(d StorePage) ([]byte, error) {
	return execute(storePage, struct {
		StorePage
		Head Head
	}{d, Head{
		Title:       d.Store + " · store statistics and charts",
		Description: "The " + d.Store + " store: its live listings, their total size, its charts (largest, trending, rising, new, top rated, climbers) and its categories.",
		Alternates:  []Alternate{{"application/json", d.JSONURL, "the statistics as JSON"}},
	}})
}

var storePage = parse("store", `<h1>The {{.Store}} store</h1>
<p class="meta">As of {{.AsOf}}. <a href="/listings?store={{.Store}}">Browse its listings</a> · <a href="/events?store={{.Store}}">its newest changes</a></p>
<table>
{{range .Figures}}<tr><th scope="row"><a href="/definitions#{{.Definition}}">{{.Label}}</a></th><td data-figure="{{.Definition}}" data-value="{{.Raw}}">{{if .Text}}{{.Text}}{{else}}—{{if .Why}}<span class="why">{{.Why}}</span>{{end}}{{end}}</td></tr>
{{end}}</table>
<h2>Charts</h2>
{{range .Charts}}{{template "list" .}}
{{end}}
<h2>Categories</h2>
<p><a href="/categories/{{.Store}}">Every category of {{.Store}}</a>, with the chart of each.</p>
<table><thead><tr><th scope="col">Category</th><th scope="col" class="num">Live listings</th></tr></thead><tbody>
{{range .Categories}}<tr><th scope="row"><a href="{{.URL}}">{{.Name}}</a></th><td data-figure="category" data-value="{{.Listings}}">{{int .Listings}}</td></tr>
{{end}}</tbody></table>`, map[string]any{"int": func(n int) string { return Int(int64(n)) }})

// StoreSummary is a store as the home page lists it.
type StoreSummary struct {
	Store       string
	URL         string
	Live        int
	TotalSize   int64
	SizeMeasure string
	Top         List // the top of one chart
}

// RenderHome returns the home page: the five stores, each with its live
// listings, total size and the top of its trending chart.
func RenderHome(stores []StoreSummary, asOf string) ([]byte, error) {
	return execute(homePage, struct {
		Stores []StoreSummary
		AsOf   string
		Head   Head
	}{stores, asOf, Head{
		Title:       "Store listings: sizes, growth and charts of five stores",
		Description: "Extensions and apps of the chrome, edge, firefox, apple and googleplay stores: how many people use each, how fast they grow, and the charts of each store.",
		Alternates:  []Alternate{{"application/json", "/api/v1/openapi.json", "the API's description"}},
	}})
}

var homePage = parse("home", `<h1>Extensions and apps of five stores</h1>
<p>Sizes, growth, ranks and charts of every listing of chrome, edge, firefox, apple and googleplay, as of {{.AsOf}}.</p>
<form method="get" action="/listings" role="search"><span class="field"><label for="q">Find a listing</label> <input id="q" name="q" size="24" placeholder="name or developer"></span> <button type="submit">Search</button></form>
<table><thead><tr><th scope="col">Store</th><th scope="col" class="num">Live listings</th><th scope="col" class="num">Total size</th></tr></thead><tbody>
{{range .Stores}}<tr><th scope="row"><a href="{{.URL}}">{{.Store}}</a></th><td data-figure="live" data-value="{{.Live}}">{{int .Live}}</td><td data-figure="totalSize" data-value="{{.TotalSize}}">{{int64 .TotalSize}} {{.SizeMeasure}}</td></tr>
{{end}}</tbody></table>
{{range .Stores}}{{template "list" .Top}}
{{end}}
<h2>For programs</h2>
<p>The same figures as JSON: the <a href="/docs">API's reference</a> and its <a href="/api/v1/openapi.json">description</a>; tools for AI agents over MCP at <code>/mcp</code>.</p>`, map[string]any{"int": func(n int) string { return Int(int64(n)) }, "int64": Int})

// CountsPage is a page of named counts, each linking to its listings: a
// store's categories, or the topics.
type CountsPage struct {
	Title, Intro string
	Columns      []string // the counts' column labels (one a store for topics)
	Rows         []CountRow
	JSONURL      string
	Head         Head
}

// CountRow is one row of a CountsPage: a name and its counts, each with
// the page of its listings ("" for none).
type CountRow struct {
	Name   string
	URL    string
	Counts []Count
}

// Count is a count with the page of what it counts.
type Count struct {
	Figure string // its JSON name, for the tests that hold pages to JSON
	N      int
	URL    string
}

// RenderCounts returns a page of counts.
func RenderCounts(d CountsPage) ([]byte, error) {
	d.Head.Title = d.Title
	d.Head.Alternates = []Alternate{{"application/json", d.JSONURL, "as JSON"}}
	return execute(countsPage, d)
}

var countsPage = parse("counts", `<h1>{{.Title}}</h1>
<p>{{.Intro}}</p>
<div class="table" role="region" tabindex="0" aria-label="{{.Title}}"><table><thead><tr><th scope="col">Name</th>{{range .Columns}}<th scope="col" class="num">{{.}}</th>{{end}}</tr></thead><tbody>
{{range .Rows}}<tr><th scope="row">{{if .URL}}<a href="{{.URL}}">{{.Name}}</a>{{else}}{{.Name}}{{end}}</th>{{range .Counts}}<td data-figure="{{.Figure}}" data-value="{{.N}}">{{if and .URL .N}}<a href="{{.URL}}">{{int .N}}</a>{{else}}{{int .N}}{{end}}</td>{{end}}</tr>
{{end}}</tbody></table></div>`, map[string]any{"int": func(n int) string { return Int(int64(n)) }})

// ListingsPage is a page of listings: a topic's in a store.
type ListingsPage struct {
	Title, Intro string
	List         List
	JSONURL      string
}

// RenderListings returns a page of listings.
func RenderListings(d ListingsPage) ([]byte, error) {
	return execute(listingsPage, struct {
		ListingsPage
		Head Head
	}{d, Head{Title: d.Title, Description: d.Intro, Alternates: []Alternate{{"application/json", d.JSONURL, "as JSON"}}}})
}

var listingsPage = parse("listings", `<h1>{{.Title}}</h1>
<p>{{.Intro}}</p>
{{template "list" .List}}`, nil)
