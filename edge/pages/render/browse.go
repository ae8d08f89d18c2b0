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
