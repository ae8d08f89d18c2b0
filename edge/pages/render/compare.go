package render

// ComparePage is listings side by side: each one's size on each date of
// the window and its growth over it.
type ComparePage struct {
	From, To string
	Days     int
	Rows     []CompareRow
	JSONURL  string
	CSVURL   string
}

// CompareRow is one compared listing.
type CompareRow struct {
	Name, Store, URL, Measure string
	First, Last               Figure // its size on the window's first and last day with one
	Change, Percent           Figure
}

// RenderCompare returns the comparison's page.
func RenderCompare(d ComparePage) ([]byte, error) {
	return execute(comparePage, struct {
		ComparePage
		Head Head
	}{d, Head{Title: "Compare listings · " + d.From + " to " + d.To, Description: "Listings side by side: their size and its growth from " + d.From + " to " + d.To + ".",
		Alternates: []Alternate{{"application/json", d.JSONURL, "the comparison as JSON"}, {"text/csv", d.CSVURL, "as CSV"}}}})
}

var comparePage = parse("compare", nil)
