package legacy

import (
	"github.com/edge-stats/edge/internal/jsonw"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
)

// rowsPage is the answer of /api/extensions as it is written: each
// listing's row is filled in turn into one, so that a page costs no row
// or document per listing. Its JSON is legacyPage's
// (TestRowAppendsAsMarshal).
type rowsPage struct {
	total, page, pageSize int
	listings              []*views.Listing
	today                 views.Day // the data's newest day (document.NewLegacyRow)
}

// AppendJSON appends the page's JSON.
func (p *rowsPage) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	b = jsonw.Int(jsonw.Key(b, "total"), int64(p.total))
	b = jsonw.Int(jsonw.Key(b, "page"), int64(p.page))
	b = jsonw.Int(jsonw.Key(b, "pageSize"), int64(p.pageSize))
	b = append(jsonw.Key(b, "rows"), '[')
	var r document.LegacyRow
	var d document.Listing
	for i, l := range p.listings {
		if i > 0 {
			b = append(b, ',')
		}
		r.Fill(l, p.today, &d)
		b = r.AppendJSON(b)
	}
	b = append(b, ']')
	return append(b, '}')
}
