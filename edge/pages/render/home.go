package render

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
