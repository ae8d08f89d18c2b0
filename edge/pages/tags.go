package pages

import (
	"net/url"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// getTagsPage answers GET /tags: every topic with its live listings per
// store, each count linking to the topic's listings in the store.
func (s *Pages) getTagsPage(c *fiber.Ctx) (answer.Reply, error) {
	f, gen, err := s.api.Figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [32]byte
	return s.htmlAnswer(f, answer.NewKey(buf[:0], "/tags", gen), func(f *figures.Figures) ([]byte, error) {
		d := render.CountsPage{Title: "Topics", Intro: "Every topic of the listings, with its live listings in each store; a count links to them.",
			JSONURL: "/api/v1/tags"}
		d.Head.Description = d.Intro
		for _, st := range views.Stores {
			d.Columns = append(d.Columns, st.String())
		}
		for _, t := range f.Topics() {
			row := render.CountRow{Name: t.Slug}
			for _, st := range views.Stores {
				row.Counts = append(row.Counts, render.Count{Figure: "listings." + st.String(), N: t.Count(st),
					URL: "/tags/" + url.PathEscape(t.Slug) + "/" + st.String()})
			}
			d.Rows = append(d.Rows, row)
		}
		return render.RenderCounts(d)
	})
}
