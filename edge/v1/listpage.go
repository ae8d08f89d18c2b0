package v1

import (
	"github.com/edge-stats/edge/internal/jsonw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
)

// listPage is the answer of GET /api/v1/listings as it is written: each
// listing's document is filled in turn into one, so that a page of 200
// costs no document per listing. Its JSON is listAnswer's
// (TestListingDocAppendsAsMarshal).
type listPage struct {
	listings   []*views.Listing
	figures    *figures.Figures
	nextCursor *string
	partial    bool
}

// AppendJSON appends the page's JSON.
func (p *listPage) AppendJSON(b []byte) []byte {
	b = append(jsonw.Key(append(b, '{'), "listings"), '[')
	var d document.Listing
	for i, l := range p.listings {
		if i > 0 {
			b = append(b, ',')
		}
		d.Fill(l, p.figures)
		b = d.AppendJSON(b)
	}
	b = append(b, ']')
	b = jsonw.StringPtr(jsonw.Key(b, "nextCursor"), p.nextCursor)
	b = jsonw.Bool(jsonw.Key(b, "partial"), p.partial)
	return append(b, '}')
}
