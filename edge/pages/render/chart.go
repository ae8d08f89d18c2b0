package render

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
		Alternates:  append([]Alternate{{"application/json", d.JSONURL, "the chart as JSON"}}, Files(d.JSONURL, "every entry")...),
	}})
}

var chartPage = parse("chart", nil)
