package render

// BrowsePage is the listings' browser: a plain GET form of the v1
// listings' filters and sorts, and a page of listings, the next by cursor.
type BrowsePage struct {
	Stores, Sorts, Orders []Option
	Q, Category, Tag      string
	List                  List
	Next                  string // the next page's address, "" at the end
	First                 string // the first page's address, "" on the first page
	Prev                  string // the page before's address, "" on the first page
	Count                 string // how many listings the query lists, where the figures know it ("" otherwise)
	Range                 string // which listings a later page shows ("Listings 51 to 100"), "" on the first
	// Comparing is the comparison the reader is adding to (its address),
	// and Compared how many listings it holds; "" and 0 for none.
	// Suggestions are listings near a search that found none.
	Suggestions           []Link
	Comparing, CompareSet string
	Compared              int
	Partial               bool // the text search ran out of its budget
	// TopRated are the top-rated charts (listings rated by at least
	// MinRatings people), offered beside a list by rating, which a
	// rating of a few people can lead; none otherwise.
	TopRated   []Link
	MinRatings int
	JSONURL    string
	// Fields are the filters past store, category, topic and search, in
	// a fold that is open when one of them is set (MoreOpen); Lists are
	// the datalists their text fields offer.
	Fields   []Field
	Lists    []DataList
	MoreOpen bool
	// Chips are the filters set, each a link to the list without it.
	Chips []Link
	// Downloads are the list as files (CSV, NDJSON) with the same
	// filters and order, FileRows the rows a file holds at most.
	Downloads []Link
	FileRows  string
	// WeekNote says which 7 days the growth column covers, and how they
	// differ from the trending charts' week.
	WeekNote string
}

// Field is a field of a form: its parameter, label, input type (text,
// number, date, select or checkbox), value, choices (a select's; a
// checkbox's one value), bounds and the datalist it offers.
type Field struct {
	Name, Label, Kind, Value string
	Options                  []Option
	Min, Max, Step, List     string
}

// DataList is a list of values a text field offers (<datalist>).
type DataList struct {
	ID     string
	Values []string
}

// RenderBrowse returns the listings' browser.
func RenderBrowse(d BrowsePage) ([]byte, error) {
	return execute(browsePage, struct {
		BrowsePage
		Head Head
	}{d, Head{Title: "Listings · search and sort", Description: "Search the listings of five stores by name or developer, filter them by store, category, topic, permission, site access, rating, dates and more, sort them by size, growth, rating or rank climb, and take any list away as CSV or NDJSON.",
		Alternates: []Alternate{{"application/json", d.JSONURL, "these listings as JSON"}}, Compare: d.CompareSet}})
}

var browsePage = parse("browse", nil)
