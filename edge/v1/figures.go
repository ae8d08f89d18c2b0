package v1

import (
	"cmp"
	"net/http"
	"slices"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/served"
)

// StoreParams are the parameters of a read of one store's figures: the
// {store} of its path.
type StoreParams struct{ Store views.Store }

// parseStore reads the {store} of c's path (an unknown store is a 404).
func parseStore(c *fiber.Ctx, _ *served.State, _ read.Needs) (StoreParams, error) {
	s, err := StoreParam(c)
	return StoreParams{Store: s}, err
}

func storeKey(k answer.Key, p *StoreParams) answer.Key { return k.Int("s", int64(p.Store)) }

// jsonOf is the JSON codec of a result whose document doc returns.
func jsonOf[T any](doc func(v *T) any) read.Codec[T] {
	return read.Codec[T]{Name: "json", Type: fiber.MIMEApplicationJSON,
		Encode: func(_ *fiber.Ctx, v *T) (*answer.Answer, error) { return answer.JSON(doc(v)) }}
}

// Categories is a store's categories with their live listings, total
// size and growth, by name or by the figure Sort names (largest first).
type Categories struct {
	Categories []figures.CategoryCount `json:"categories"`
	Store      string                  `json:"store"`
	Sort       string                  `json:"-"` // as read: name, listings, size, growth7d or growth30d
}

// CategoriesParams are a store's categories' parameters as read.
type CategoriesParams struct {
	Store views.Store
	Sort  string
}

// categorySorts are the orders of a store's categories: by name (A to
// Z), else by the figure, largest first, those without it last, ties by
// name.
var categorySorts = map[string]func(c *figures.CategoryCount) *int64{
	"listings": func(c *figures.CategoryCount) *int64 { n := int64(c.Listings); return &n },
	"size":     func(c *figures.CategoryCount) *int64 { return &c.TotalSize },
	"growth7d": func(c *figures.CategoryCount) *int64 { return c.Growth7d }, "growth30d": func(c *figures.CategoryCount) *int64 { return c.Growth30d },
}

// CategoriesRead is the read of a store's categories (GET
// /api/v1/categories/{store}, the categories' page and their files).
func CategoriesRead() *read.Read[CategoriesParams, Categories] { return categoriesRead }

var categoriesRead = &read.Read[CategoriesParams, Categories]{
	Cheap:    true,
	Route:    "/api/v1/categories/:store",
	NotReady: "The store's categories are",
	Page:     answer.SamePage,
	Parse: func(c *fiber.Ctx, _ *served.State, _ read.Needs) (CategoriesParams, error) {
		s, err := StoreParam(c)
		if err != nil {
			return CategoriesParams{}, err
		}
		sort := c.Query("sort", "name")
		if _, ok := categorySorts[sort]; !ok && sort != "name" {
			return CategoriesParams{}, problem.Newf(http.StatusBadRequest, "sort: %.40q is not an order of the categories; use name, listings, size, growth7d or growth30d.", sort).
				ForReaders("The categories are listed by name, listings, size or growth, in no other order.")
		}
		return CategoriesParams{Store: s, Sort: strings.Clone(sort)}, nil
	},
	Key: func(k answer.Key, p *CategoriesParams) answer.Key {
		return k.Int("s", int64(p.Store)).Str("sort", p.Sort)
	},
	Run: func(_ *fiber.Ctx, st *served.State, p *CategoriesParams, _ read.Needs) (*Categories, error) {
		cats := st.Figures.Categories(p.Store)
		if by := categorySorts[p.Sort]; by != nil {
			cats = slices.Clone(cats)
			slices.SortStableFunc(cats, func(a, b figures.CategoryCount) int {
				va, vb := by(&a), by(&b)
				switch {
				case va == nil && vb == nil:
					return 0
				case va == nil:
					return 1
				case vb == nil:
					return -1
				}
				return cmp.Compare(*vb, *va)
			})
		}
		return &Categories{Categories: cats, Store: p.Store.String(), Sort: p.Sort}, nil
	},
}

// Stats is a store's statistics (the JSON), with the store and the state
// they were read from, which the store's page reads its charts, its
// categories and its newest changes from.
type Stats struct {
	Stats *figures.StoreStats
	Store views.Store
	State *served.State
}

// StatsRead is the read of a store's statistics (GET
// /api/v1/stores/{store}/stats and the store's page).
func StatsRead() *read.Read[StoreParams, Stats] { return statsRead }

var statsRead = &read.Read[StoreParams, Stats]{
	Cheap:    true,
	Route:    "/api/v1/stores/:store/stats",
	NotReady: "The store's statistics are",
	Page:     answer.ParentPage,
	Parse:    parseStore,
	Key:      storeKey,
	Run: func(_ *fiber.Ctx, st *served.State, p *StoreParams, _ read.Needs) (*Stats, error) {
		return &Stats{Stats: st.Figures.Stats(p.Store), Store: p.Store, State: st}, nil
	},
}

// statsJSON writes a store's statistics.
var statsJSON = jsonOf(func(v *Stats) any { return v.Stats })

// categoriesJSON writes a store's categories.
var categoriesJSON = jsonOf(func(v *Categories) any { return v })
