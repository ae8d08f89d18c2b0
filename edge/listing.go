package edge

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/views"
)

// state returns the published state, or a 503 problem before the first load.
func (s *Server) current() (*views.State, error) {
	st := s.state.Load()
	if st == nil {
		return nil, NewProblem(http.StatusServiceUnavailable,
			"The listing replica is still loading after a restart. Retry in a few seconds.").RetryAfter(5)
	}
	return st, nil
}

// storeParam reads the {store} path parameter.
func storeParam(c *fiber.Ctx) (views.Store, error) {
	st, err := views.ParseStore(c.Params("store"))
	if err != nil {
		return 0, NewProblem(http.StatusNotFound, err.Error())
	}
	return st, nil
}

// getListing answers GET /api/v1/listings/{store}/{id}.
func (s *Server) getListing(c *fiber.Ctx) error {
	store, err := storeParam(c)
	if err != nil {
		return err
	}
	st, err := s.current()
	if err != nil {
		return err
	}
	id := c.Params("id")
	l := st.Replica.Lookup(store, id)
	if l == nil {
		return Problemf(http.StatusNotFound, "There is no listing %q in store %s. Use the store's own id, as listed by /api/v1/listings?store=%s.", id, store, store)
	}
	if !l.Crawled() {
		return Problemf(http.StatusNotFound, "Listing %q in store %s has been found but not read yet; retry after its first crawl.", id, store)
	}
	return c.JSON(views.NewListingDoc(l, st.Figures))
}

// notReady is the spec's answer for a figure computed in the background
// that is not built yet after a restart.
func notReady(what string) *Problem {
	return Problemf(http.StatusServiceUnavailable,
		"%s computed in the background after a restart and not ready yet. Retry in a minute.", what).RetryAfter(60)
}

// figures returns the published figures, or the 503 of the States table.
func (s *Server) figures(what string) (*views.Figures, error) {
	st := s.state.Load()
	if st == nil || st.Figures == nil {
		return nil, notReady(what)
	}
	return st.Figures, nil
}

// getCategories answers GET /api/v1/categories/{store}.
func (s *Server) getCategories(c *fiber.Ctx) error {
	store, err := storeParam(c)
	if err != nil {
		return err
	}
	f, err := s.figures("The categories of " + store.String() + " are")
	if err != nil {
		return err
	}
	return c.JSON(fiber.Map{"store": store.String(), "categories": nonNilSlice(f.Categories(store))})
}

// getStats answers GET /api/v1/stores/{store}/stats.
func (s *Server) getStats(c *fiber.Ctx) error {
	store, err := storeParam(c)
	if err != nil {
		return err
	}
	f, err := s.figures("The statistics of " + store.String() + " are")
	if err != nil {
		return err
	}
	return c.JSON(f.Stats(store))
}

// getLatestWeek answers GET /api/v1/week.
func (s *Server) getLatestWeek(c *fiber.Ctx) error {
	e := s.editions.Load().Latest()
	if e == nil {
		return notReady("Weekly editions are")
	}
	return c.JSON(e)
}

// getWeek answers GET /api/v1/week/{id}.
func (s *Server) getWeek(c *fiber.Ctx) error {
	w, err := views.ParseWeek(c.Params("id"))
	if err != nil {
		return NewProblem(http.StatusBadRequest, err.Error())
	}
	eds := s.editions.Load()
	if eds == nil {
		return notReady("Weekly editions are")
	}
	e := eds.Get(w)
	if e == nil {
		return Problemf(http.StatusNotFound, "There is no edition of week %s: editions exist for complete weeks in the data, the latest being %s.", w, eds.Latest().Week)
	}
	return c.JSON(e)
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
