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
<label for="category">Category</label> <select id="category" name="category"><option value="">the whole store</option>{{range .Categories}}<option value="{{.Label}}"{{if .Current}} selected{{end}}>{{.Label}}</option>{{end}}</select>
<button type="submit">Show</button></form>{{end}}
{{if .Window}}<p>{{.Window}}</p>{{end}}
<p class="note">{{.Note}}</p>
<div class="table">{{template "list" .List}}</div>`, nil)
