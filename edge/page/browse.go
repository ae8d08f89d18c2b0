package page

// BrowsePage is the listings' browser: a plain GET form of the v1
// listings' filters and sorts, and a page of listings, the next by cursor.
type BrowsePage struct {
	Stores, Sorts, Orders []Option
	Q, Category, Tag      string
	List                  List
	Next                  string // the next page's address, "" at the end
	Partial               bool   // the text search ran out of its budget
	JSONURL               string
}

// RenderBrowse returns the listings' browser.
func RenderBrowse(d BrowsePage) ([]byte, error) {
	return execute(browsePage, struct {
		BrowsePage
		Head Head
	}{d, Head{Title: "Listings · search and sort", Description: "Search the listings of five stores by name or developer, filter them by store, category or topic, and sort them by size, growth, rating or rank climb.",
		Alternates: []Alternate{{"application/json", d.JSONURL, "these listings as JSON"}}}})
}

var browsePage = parse("browse", nil)

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
