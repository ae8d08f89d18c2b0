package pages

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views/figures"
)

// figuresPage is the handler of the page at route of rd, a read of the
// published figures: rd as the page reads it (public as every page is,
// keyed by the page's route, no page link of its own), answered as the
// page html writes, or in one of the files of the same read (format=,
// or an Accept that prefers them).
func figuresPage[P, T any](s *Pages, rd read.Read[P, T], route string, html func(v *T) ([]byte, error), files ...read.Codec[T]) read.Handler {
	rd.Route, rd.CacheControl, rd.Page = route, pageCacheControl, answer.NoPage
	page := read.Codec[T]{Name: "html", Type: fiber.MIMETextHTML, Encode: func(_ *fiber.Ctx, v *T) (*answer.Answer, error) {
		body, err := html(v)
		if err != nil {
			return nil, err
		}
		return pageAnswer(answer.NewKey(nil, route, 0), htmlType, body), nil
	}}
	return read.Serve(s.api.Env(), &rd, append([]read.Codec[T]{page}, files...)...)
}

// categoriesHandler answers GET /categories/{store}: the store's
// categories with their live listings, each linking to its chart; or
// their files.
func (s *Pages) categoriesHandler() read.Handler {
	return figuresPage(s, *v1.CategoriesRead(), "/categories/:store", categoriesHTML, v1.CategoriesFiles()...)
}

// categoriesHTML is the page of a store's categories v.
func categoriesHTML(v *v1.Categories) ([]byte, error) {
	store := v.Store
	d := render.CountsPage{Title: "Categories of " + store, Columns: []string{"Live listings"},
		Intro:   "Every category of a live listing of the " + store + " store, by name; each links to its chart of the largest.",
		JSONURL: "/api/v1/categories/" + store, FileRows: "every category"}
	d.Head.Description = d.Intro
	for _, cat := range v.Categories {
		u := "/charts/" + store + chartQuery(figures.ChartTop, cat.Name)
		d.Rows = append(d.Rows, render.CountRow{Name: cat.Name, URL: u, Counts: []render.Count{{Figure: "listings", N: cat.Listings}}})
	}
	return render.RenderCounts(d)
}
