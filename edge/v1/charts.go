package v1

import (
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
)

// getChart answers GET /api/v1/charts/{store}?chart=&category=. The chart
// defaults to top; an unknown chart name is a 400 listing the names; a
// category the store does not have is a 404.
func (s *API) getChart(c *fiber.Ctx) (answer.Reply, error) {
	store, chart, category, f, gen, err := s.ChartParams(c)
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/charts/:store", gen).Int("s", int64(store)).Str("chart", chart).Str("c", category)
	return s.figuresAnswer(c, f, key, func(f *figures.Figures) any { return document.NewChart(f, store, chart, category) })
}

// ChartParams reads a chart's store, name (top by default; another name
// is a 400 listing the names) and category (a category the store does not
// have is a 404), with the published figures.
func (s *API) ChartParams(c *fiber.Ctx) (store views.Store, chart, category string, f *figures.Figures, gen uint64, err error) {
	if store, err = StoreParam(c); err != nil {
		return
	}
	chart = c.Query("chart", figures.ChartTop)
	if !slices.Contains(figures.Charts, chart) {
		err = problem.Newf(http.StatusBadRequest, "chart: %q is not a chart; use one of %s.", chart, strings.Join(figures.Charts, ", ")).
			ForReaders(fmt.Sprintf("There is no chart %.40q. A store's page links to each of its charts.", chart))
		return
	}
	if f, gen, err = s.Figures("Charts are"); err != nil {
		return
	}
	if v := c.Query("category"); v != "" {
		category, err = categoryArg(f, &store, v)
	}
	return
}

// tagCount is a topic with its live listings per store.
type tagCount struct {
	Slug     string         `json:"slug"`
	Listings map[string]int `json:"listings"`
}

// getTags answers GET /api/v1/tags.
func (s *API) getTags(c *fiber.Ctx) (answer.Reply, error) {
	f, gen, err := s.Figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	return s.figuresAnswer(c, f, answer.NewKey(buf[:0], "/api/v1/tags", gen), func(f *figures.Figures) any {
		out := []tagCount{}
		for _, t := range f.Topics() {
			tc := tagCount{Slug: t.Slug, Listings: map[string]int{}}
			for _, st := range views.Stores {
				tc.Listings[st.String()] = t.Count(st)
			}
			out = append(out, tc)
		}
		return fiber.Map{"tags": out}
	})
}

// getTag answers GET /api/v1/tags/{slug}/{store}: the topic's live listings
// in the store, largest first (at most 200).
func (s *API) getTag(c *fiber.Ctx) (answer.Reply, error) {
	store, err := StoreParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.Figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	slug, err := TagArg(f, c.Params("slug"))
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/tags/:slug/:store", gen).Str("tag", slug).Int("s", int64(store))
	return s.figuresAnswer(c, f, key, func(f *figures.Figures) any {
		ls, _ := f.TopicListings(slug, store)
		docs := []document.Listing{}
		for _, l := range ls[:min(len(ls), 200)] {
			docs = append(docs, document.NewListing(l, f))
		}
		return fiber.Map{"tag": slug, "store": store.String(), "total": len(ls), "listings": docs}
	})
}
