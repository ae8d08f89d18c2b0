package document

import (
	"github.com/edge-stats/edge/internal/jsonw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// ListingPage is a page of listings, as /api/v1/listings and the listings'
// page give it. Its JSON is written as it goes: each
// listing's document is filled in turn into one, so that a page of 200
// costs no document per listing. Its JSON is a list of
// Listing documents (TestListPageAppendsAsMarshal in edge/v1).
type ListingPage struct {
	Listings   []*views.Listing
	Figures    *figures.Figures
	NextCursor *string // the cursor of the next page; nil on the last
	// PrevCursor is the cursor of the page before, for the listings' page
	// (not in the JSON: the API's cursors run forward); nil on the first
	// two pages, whose page before has none, and on the API.
	PrevCursor *string
	Partial    bool // a search cut short by its time budget: no next page is offered
	// Offset is how many listings the pages before this one held, and
	// Page its number from 1 (not in the JSON: a page numbers its rows
	// from them).
	Offset, Page int
	// Total is how many listings the query lists over all its pages, when
	// it is known (Counted): on the listings' page, but for a search cut
	// short by its time budget; never on the API.
	Total   int
	Counted bool
	// Query is the listings' page's query as it reads it, canonical (its
	// cache key is made of it): each parameter's value by name. Nil on
	// the API.
	Query map[string]string
}

// AppendJSON appends the page's JSON.
func (p *ListingPage) AppendJSON(b []byte) []byte {
	b = append(jsonw.Key(append(b, '{'), "listings"), '[')
	var d Listing
	for i, l := range p.Listings {
		if i > 0 {
			b = append(b, ',')
		}
		d.Fill(l, p.Figures)
		b = d.AppendJSON(b)
	}
	b = append(b, ']')
	b = jsonw.StringPtr(jsonw.Key(b, "nextCursor"), p.NextCursor)
	b = jsonw.Bool(jsonw.Key(b, "partial"), p.Partial)
	return append(b, '}')
}
