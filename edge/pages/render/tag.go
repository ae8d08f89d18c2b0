package render

// TagPage is a topic's page: its listings in a store.
type TagPage struct {
	Title, Intro string
	List         List
	JSONURL      string
	FileRows     string // what its files hold; "" for the first 10,000 listings
}

// RenderTag returns a topic's page.
func RenderTag(d TagPage) ([]byte, error) {
	if d.FileRows == "" {
		d.FileRows = "the first 10,000 listings"
	}
	return execute(tagPage, struct {
		TagPage
		Head Head
	}{d, Head{Title: d.Title, Description: d.Intro, Alternates: append([]Alternate{{"application/json", d.JSONURL, "as JSON"}}, Files(d.JSONURL, d.FileRows)...)}})
}

var tagPage = parse("tag", nil)
