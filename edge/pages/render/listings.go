package render

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
