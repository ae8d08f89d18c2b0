package v1

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// chartEntry is one listing in a chart answer. The charts of a window
// (trending, rising, climbers) give the figure each entry was ranked by,
// between the chart's from and to; the others leave those fields out.
type chartEntry struct {
	Position int        `json:"position"`
	From     *time.Time `json:"from,omitempty"`
	To       *time.Time `json:"to,omitempty"`
	Change   *int64     `json:"change,omitempty"`  // trending, rising: the size change from from to to
	Percent  *float64   `json:"percent,omitempty"` // trending, rising: of the size at from, two decimals
	Climb    *int       `json:"climb,omitempty"`   // climbers: the store-rank climb from from to to
	Listing  ListingDoc `json:"listing"`
}

// chartAnswer is the answer of /api/v1/charts/{store}.
type chartAnswer struct {
	Store    string       `json:"store"`
	Chart    string       `json:"chart"`
	Category *string      `json:"category"`
	From     *time.Time   `json:"from"` // the charts of a window: the instants every entry is ranked between; else null
	To       *time.Time   `json:"to"`
	Entries  []chartEntry `json:"entries"`
}

// getChart answers GET /api/v1/charts/{store}?chart=&category=. The chart
// defaults to top; an unknown chart name is a 400 listing the names; a
// category the store does not have is a 404.
func (s *API) getChart(c *fiber.Ctx) (answer.Reply, error) {
	store, err := storeParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	chart := c.Query("chart", figures.ChartTop)
	if !slices.Contains(figures.Charts, chart) {
		return answer.Reply{}, problem.Newf(http.StatusBadRequest, "chart: %q is not a chart; use one of %s.", chart, strings.Join(figures.Charts, ", "))
	}
	f, gen, err := s.figures("Charts are")
	if err != nil {
		return answer.Reply{}, err
	}
	var category string
	if v := c.Query("category"); v != "" {
		if category, err = categoryArg(f, &store, v); err != nil {
			return answer.Reply{}, err
		}
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/charts/:store", gen).Int("s", int64(store)).Str("chart", chart).Str("c", category)
	return s.figuresAnswer(c, f, key, func(f *figures.Figures) any {
		a := chartAnswer{Store: store.String(), Chart: chart, Entries: []chartEntry{}}
		if category != "" {
			a.Category = &category
		}
		if from, to, ok := f.Window(chart); ok {
			a.From, a.To = unixPtr(from), unixPtr(to)
		}
		for i, l := range f.Chart(figures.ChartKey{Store: store, Chart: chart, Category: category}) {
			e := chartEntry{Position: i + 1, Listing: NewListingDoc(l, f)}
			if r, ok := f.RankedBy(chart, l); ok {
				e.From, e.To = a.From, a.To
				if chart == figures.ChartClimbers {
					e.Climb = &r.Climb
				} else {
					e.Change, e.Percent = &r.Change, percent2(r.Percent)
				}
			}
			a.Entries = append(a.Entries, e)
		}
		return a
	})
}

// tagCount is a topic with its live listings per store.
type tagCount struct {
	Slug     string         `json:"slug"`
	Listings map[string]int `json:"listings"`
}

// getTags answers GET /api/v1/tags.
func (s *API) getTags(c *fiber.Ctx) (answer.Reply, error) {
	f, gen, err := s.figures("Topics are")
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
	store, err := storeParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.figures("Topics are")
	if err != nil {
		return answer.Reply{}, err
	}
	slug, err := tagArg(f, c.Params("slug"))
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/tags/:slug/:store", gen).Str("tag", slug).Int("s", int64(store))
	return s.figuresAnswer(c, f, key, func(f *figures.Figures) any {
		ls, _ := f.TopicListings(slug, store)
		docs := []ListingDoc{}
		for _, l := range ls[:min(len(ls), 200)] {
			docs = append(docs, NewListingDoc(l, f))
		}
		return fiber.Map{"tag": slug, "store": store.String(), "total": len(ls), "listings": docs}
	})
}
