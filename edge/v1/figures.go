package v1

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
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

// Categories is a store's categories with their live listings, by name.
type Categories struct {
	Categories []figures.CategoryCount `json:"categories"`
	Store      string                  `json:"store"`
}

// CategoriesRead is the read of a store's categories (GET
// /api/v1/categories/{store}, the categories' page and their files).
func CategoriesRead() *read.Read[StoreParams, Categories] { return categoriesRead }

var categoriesRead = &read.Read[StoreParams, Categories]{
	Cheap:    true,
	Route:    "/api/v1/categories/:store",
	NotReady: "The store's categories are",
	Page:     answer.SamePage,
	Parse:    parseStore,
	Key:      storeKey,
	Run: func(_ *fiber.Ctx, st *served.State, p *StoreParams, _ read.Needs) (*Categories, error) {
		return &Categories{Categories: st.Figures.Categories(p.Store), Store: p.Store.String()}, nil
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
