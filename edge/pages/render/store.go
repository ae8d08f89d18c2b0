package render

// StorePage is what a store's page shows: its statistics, its newest
// takeovers and changes, the top of each chart, its categories.
type StorePage struct {
	Store      string
	AsOf       string
	Figures    []Figure
	Charts     []List
	Categories []Category
	JSONURL    string
	// Takeovers and Changes are the store's newest takeovers and newest
	// changes, newest first.
	Takeovers, Changes []Event
	// Manifests says the store's manifests are read: only then can its
	// listings widen what they may do, and so be taken over.
	Manifests bool
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
