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

var chartPage = parse("chart", nil)

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

var storePage = parse("store", map[string]any{"int": func(n int) string { return Int(int64(n)) }})

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

var homePage = parse("home", map[string]any{"int": func(n int) string { return Int(int64(n)) }, "int64": Int})

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

var countsPage = parse("counts", map[string]any{"int": func(n int) string { return Int(int64(n)) }})

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

var listingsPage = parse("listings", nil)
