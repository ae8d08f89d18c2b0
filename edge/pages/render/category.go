package render

import "html/template"

// CategoryPage is one category of a store: its figures, its live
// listings and total size at each week's end as charts, its largest
// listings and those that grew most over 7 days.
type CategoryPage struct {
	Name, Store, SizeMeasure string
	Figures                  []Figure
	// Weeks are the category's totals at each week's end, oldest first:
	// Size holds the live listings ranked that day (Live) or the sum of
	// their sizes (TotalSize). WeeksMissing says they could not be read.
	Live, TotalSize []Point
	WeeksMissing    bool
	Ranking         bool // the ranks job counts days now: the weeks may lack some
	Top, Fastest    List
	ChartURL        string // the store's chart of the category's largest
	BrowseURL       string // the browser, filtered to the category
	JSONURL         string
}

// RenderCategory returns a category's page.
func RenderCategory(d CategoryPage) ([]byte, error) {
	var liveChart, sizeChart template.HTML
	if len(d.Live) > 1 {
		liveChart = lineChart(d.Live, weeklyLabel("Live listings", d.Live), sizeAxis)
		sizeChart = lineChart(d.TotalSize, weeklyLabel("Total size", d.TotalSize), sizeAxis)
	}
	return execute(categoryPage, struct {
		CategoryPage
		LiveChart, SizeChart template.HTML
		Head                 Head
	}{d, liveChart, sizeChart, Head{
		Title:       d.Name + " · category of " + d.Store,
		Description: "The " + d.Name + " category of the " + d.Store + " store: its live listings, their total size and growth, week by week, its largest listings and those that grew most.",
		Alternates:  append([]Alternate{{"application/json", d.JSONURL, "the category as JSON"}}, Files(d.JSONURL, "its weeks")...),
	}})
}

var categoryPage = parse("category", nil)
