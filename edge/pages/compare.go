package pages

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/views/document"
)

// getComparePage answers GET /compare?listings=&days=: the comparison of
// /api/v1/compare as a page, from the same query, cached per view
// generation and query as sent (the page links its JSON and CSV by it).
func (s *Pages) getComparePage(c *fiber.Ctx) (answer.Reply, error) {
	qs := string(c.Request().URI().QueryString())
	a, err := s.api.Compare(c, "/compare", func(k answer.Key) answer.Key { return k.Str("q", qs) }, func(out *document.Comparison) (*answer.Answer, error) {
		body, err := comparePage(out, qs)
		if err != nil {
			return nil, err
		}
		return pageAnswer(answer.NewKey(nil, "/compare", 0), htmlType, body), nil
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
}

// comparePage is the page of the comparison doc, asked with the query
// string qs.
func comparePage(doc *document.Comparison, qs string) ([]byte, error) {
	d := render.ComparePage{From: doc.From, To: doc.To, Days: doc.Days, JSONURL: "/api/v1/compare?" + qs, CSVURL: "/api/v1/compare.csv?" + qs}
	for _, l := range doc.Listings {
		row := render.CompareRow{Name: l.Name, Store: l.Store, Measure: l.SizeMeasure, URL: "/listings/" + l.Store + "/" + url.PathEscape(l.ID)}
		if row.Name == "" {
			row.Name = l.ID
		}
		first, last := render.Figure{Definition: "size.first"}, render.Figure{Definition: "size.last"}
		for _, v := range l.Size {
			if v != nil {
				if first.Raw == "" {
					first.Raw, first.Text = strconv.FormatInt(*v, 10), render.Int(*v)
				}
				last.Raw, last.Text = strconv.FormatInt(*v, 10), render.Int(*v)
			}
		}
		row.First, row.Last = first, last
		row.Change, row.Percent = render.Figure{Definition: "growth.change", Why: "fewer than two days with a size"}, render.Figure{Definition: "growth.percent"}
		if g := l.Growth; g != nil {
			row.Change.Raw, row.Change.Text, row.Change.Why = strconv.FormatInt(g.Change, 10), render.Signed(g.Change), ""
			if g.Percent != nil {
				row.Percent.Raw, row.Percent.Text = strconv.FormatFloat(*g.Percent, 'f', -1, 64), strconv.FormatFloat(*g.Percent, 'f', 2, 64)+"%"
			}
		}
		d.Rows = append(d.Rows, row)
	}
	return render.RenderCompare(d)
}
