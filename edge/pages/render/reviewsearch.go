package render

// ReviewSearchPage is the review search across listings: its form, and
// once asked the listings whose reviews match, with the next page.
type ReviewSearchPage struct {
	Q, Store, Tag, Category string
	Stars, Stores           []Option
	Asked, Partial          bool
	StarsWords              string // the stars searched in words ("critical (1 or 2 stars)"), "" for all
	List                    List
	Next                    string
	JSONURL                 string
}

// RenderReviewSearch returns the review search's page.
func RenderReviewSearch(d ReviewSearchPage) ([]byte, error) {
	head := Head{Title: "Search the reviews", Description: "Find the listings whose store reviews mention words or a phrase, most matches first."}
	if d.Asked {
		head.Title = "Reviews matching “" + d.Q + "”"
		head.Alternates = append([]Alternate{{"application/json", d.JSONURL, "the search as JSON"}}, Files(d.JSONURL, "this page's listings")...)
	}
	return execute(reviewSearchPage, struct {
		ReviewSearchPage
		Head Head
	}{d, head})
}

var reviewSearchPage = parse("reviewsearch", nil)
