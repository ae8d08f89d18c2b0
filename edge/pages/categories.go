package pages

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views/figures"
)

// getCategoriesPage answers GET /categories/{store}: the store's
// categories with their live listings, each linking to its chart.
func (s *Pages) getCategoriesPage(c *fiber.Ctx) (answer.Reply, error) {
	store, err := v1.StoreParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.api.Figures("The store's categories are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	return s.htmlAnswer(f, answer.NewKey(buf[:0], "/categories/:store", gen).Int("s", int64(store)), func(f *figures.Figures) ([]byte, error) {
		d := render.CountsPage{Title: "Categories of " + store.String(), Columns: []string{"Live listings"},
			Intro:   "Every category of a live listing of the " + store.String() + " store, by name; each links to its chart of the largest.",
			JSONURL: "/api/v1/categories/" + store.String()}
		d.Head.Description = d.Intro
		for _, cat := range f.Categories(store) {
			u := "/charts/" + store.String() + chartQuery(figures.ChartTop, cat.Name)
			d.Rows = append(d.Rows, render.CountRow{Name: cat.Name, URL: u, Counts: []render.Count{{Figure: "listings", N: cat.Listings}}})
		}
		return render.RenderCounts(d)
	})
}
