package render

// CountsPage is a page of named counts, each linking to its listings: a
// store's categories, or the topics.
type CountsPage struct {
	Title, Intro string
	Columns      []string // the counts' column labels (one a store for topics)
	Rows         []CountRow
	JSONURL      string
	FileRows     string // what its files hold ("every category"); "" for no files
	Head         Head
}

// CountRow is one row of a CountsPage: a name and its counts, each with
// the page of its listings ("" for none).
type CountRow struct {
	Name   string
	URL    string
	Counts []Count
}

// Count is a count with the page of what it counts.
type Count struct {
	Figure string // its JSON name, for the tests that hold pages to JSON
	N      int
	URL    string
}

// RenderCounts returns a page of counts.
func RenderCounts(d CountsPage) ([]byte, error) {
	d.Head.Title = d.Title
	d.Head.Alternates = []Alternate{{"application/json", d.JSONURL, "as JSON"}}
	if d.FileRows != "" {
		d.Head.Alternates = append(d.Head.Alternates, Files(d.JSONURL, d.FileRows)...)
	}
	return execute(countsPage, d)
}

var countsPage = parse("counts", map[string]any{"int": func(n int) string { return Int(int64(n)) }})
