package render

import "html/template"

// ComparePage is listings side by side: each one's size on each date of
// the window and its growth over it, its line in a chart of their growth,
// and a form that changes the listings and the window. With fewer than
// two listings it is the form alone (Rows empty).
type ComparePage struct {
	From, To string
	Days     int
	Dates    []string
	Rows     []CompareRow
	JSONURL  string
	CSVURL   string
	// Listings is the listings' parameter as given (store:id,
	// comma-separated), DaysOptions the windows offered, AddURL the
	// listings' browser that adds to this comparison.
	Listings    string
	DaysOptions []Option
	AddURL      string
}

// CompareRow is one compared listing.
type CompareRow struct {
	Number                    int // its line's label in the chart
	Name, Store, URL, Measure string
	First, Last               Figure // its size on the window's first and last day with one
	Change, Percent           Figure
	Size                      []*int64 // each day's, for the chart
	RemoveURL                 string   // the comparison without it
	Dash                      string   // its line's dash pattern in the chart ("" solid), for the key
}

// RenderCompare returns the comparison's page.
func RenderCompare(d ComparePage) ([]byte, error) {
	head := Head{Title: "Compare listings", Description: "Compare two to ten listings of any stores: their size and its growth over a window."}
	var chartSVG template.HTML
	if len(d.Rows) > 0 {
		head = Head{Title: "Compare listings · " + d.From + " to " + d.To, Description: "Listings side by side: their size and its growth from " + d.From + " to " + d.To + ".",
			Alternates: []Alternate{{"application/json", d.JSONURL, "the comparison as JSON"}, {"text/csv", d.CSVURL, "as CSV"}}}
		series := make([]CompareSeries, len(d.Rows))
		for i, r := range d.Rows {
			series[i] = CompareSeries{Number: r.Number, Size: r.Size}
			d.Rows[i].Dash = dashes[i%len(dashes)]
		}
		chartSVG = compareChart(d.Dates, series)
	}
	head.Compare = d.Listings
	return execute(comparePage, struct {
		ComparePage
		Chart template.HTML
		Head  Head
	}{d, chartSVG, head})
}

var comparePage = parse("compare", nil)
