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

var browsePage = parse("browse", `<h1>Listings</h1>
<form method="get" action="/listings" role="search">
<span class="field"><label for="q">Name or developer</label> <input id="q" name="q" value="{{.Q}}" size="20"></span>
<span class="field"><label for="store">Store</label> <select id="store" name="store"><option value="">every store</option>{{range .Stores}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></span>
<span class="field"><label for="category">Category</label> <input id="category" name="category" value="{{.Category}}" size="14"></span>
<span class="field"><label for="tag">Topic</label> <input id="tag" name="tag" value="{{.Tag}}" size="10"></span>
<span class="field"><label for="sort">Sort by</label> <select id="sort" name="sort">{{range .Sorts}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></span>
<span class="field"><label for="order">Order</label> <select id="order" name="order">{{range .Orders}}<option value="{{.Value}}"{{if .Selected}} selected{{end}}>{{.Label}}</option>{{end}}</select></span>
<button type="submit">Show</button>
</form>
{{if .Partial}}<p class="note">The search ran out of its time: these are the listings found so far.</p>{{end}}
{{template "list" .List}}
{{if .Next}}<p><a href="{{.Next}}">Next listings</a></p>{{end}}`, nil)

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

var comparePage = parse("compare", `<h1>Listings compared</h1>
<p class="meta">{{.Days}} days, {{.From}} to {{.To}}. Growth is from each listing's first day with a size in the window to its last.</p>
<div class="table" role="region" tabindex="0" aria-label="The listings compared"><table><thead><tr><th scope="col">Listing</th><th scope="col" class="num">First size</th><th scope="col" class="num">Last size</th><th scope="col" class="num"><a href="/definitions#compareGrowth">Growth</a></th><th scope="col" class="num">Growth (%)</th></tr></thead><tbody>
{{range .Rows}}<tr><th scope="row"><a href="{{.URL}}">{{.Name}}</a><span class="why">{{.Store}}, {{.Measure}}</span></th>{{template "fig" .First}}{{template "fig" .Last}}{{template "fig" .Change}}{{template "fig" .Percent}}</tr>
{{end}}</tbody></table></div>`, nil)
