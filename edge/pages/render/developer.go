package render

// DeveloperPage is a developer's page in one store: its listings, how
// many are live and their total size, the same extensions elsewhere, and
// the listings that came to it or left it.
type DeveloperPage struct {
	Name, Store  string
	List         List
	Live, Listed int
	Shown        int // listings in List: the first ones when Listed is more
	TotalSize    string
	SizeMeasure  string
	Elsewhere    []DeveloperLink
	Ownership    []Event
	JSONURL      string
	PageURL      string // the page's own address, which answers its files
}

// DeveloperLink is a listing of another store linked to one of the
// developer's, with its developer there and that developer's page.
type DeveloperLink struct {
	Name, Store, URL, Developer, DeveloperURL string
}

// RenderDeveloper returns a developer's page.
func RenderDeveloper(d DeveloperPage) ([]byte, error) {
	return execute(developerPage, struct {
		DeveloperPage
		Head Head
	}{d, Head{Title: d.Name + " · developer in " + d.Store,
		Description: "Every listing of " + d.Name + " in the " + d.Store + " store, its total size, the same extensions in other stores, and the listings that changed hands to or from it.",
		Alternates:  append([]Alternate{{"application/json", d.JSONURL, "the developer as JSON"}}, Files(d.JSONURL, "every listing")...)}})
}

var developerPage = parse("developer", nil)
