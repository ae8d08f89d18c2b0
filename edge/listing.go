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
	return c.JSON(views.NewListingDoc(l))
}
