package v1

import (
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/editions"
)

// state returns the published state, or a 503 problem before the first load.
func (s *API) current() (*views.State, error) {
	st := s.state.Load()
	if st == nil {
		return nil, problem.New(http.StatusServiceUnavailable,
			"The listing replica is still loading after a restart. Retry in a few seconds.").RetryAfter(5)
	}
	return st, nil
}

// storeParam reads the {store} path parameter.
func storeParam(c *fiber.Ctx) (views.Store, error) {
	st, err := views.ParseStore(c.Params("store"))
	if err != nil {
		return 0, problem.New(http.StatusNotFound, err.Error())
	}
	return st, nil
}

// listingParams reads the {store} and {id} path parameters of a listing's
// address and finds the listing in the current state: 404 for an unknown
// store or listing, or one found but not read yet.
func (s *API) listingParams(c *fiber.Ctx) (st *views.State, l *views.Listing, err error) {
	store, err := storeParam(c)
	if err != nil {
		return nil, nil, err
	}
	if st, err = s.current(); err != nil {
		return nil, nil, err
	}
	id := c.Params("id")
	if l = st.Replica.Lookup(store, id); l == nil {
		return nil, nil, problem.Newf(http.StatusNotFound, "There is no listing %q in store %s. Use the store's own id, as listed by /api/v1/listings?store=%s.", id, store, store)
	}
	if !l.Crawled() {
		return nil, nil, problem.Newf(http.StatusNotFound, "Listing %q in store %s has been found but not read yet; retry after its first crawl.", id, store)
	}
	return st, l, nil
}

// getListing answers GET /api/v1/listings/{store}/{id}.
func (s *API) getListing(c *fiber.Ctx) error {
	st, l, err := s.listingParams(c)
	if err != nil {
		return err
	}
	store, id := l.Store, l.ID
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/listings/:store/:id", st.Replica.Info().Generation).Int("s", int64(store)).Str("id", id)
	a, err := s.answers.Get(key, func() (*answer.Answer, error) { return answer.JSON(views.NewListingDoc(l, st.Figures)) })
	if err != nil {
		return err
	}
	return answer.Send(c, a, answer.Private)
}

// figures returns the published figures and the generation of the views,
// or a 503 naming what ("Charts are") until the figures are built.
func (s *API) figures(what string) (*views.Figures, uint64, error) {
	st := s.state.Load()
	if st == nil || st.Figures == nil {
		return nil, 0, problem.NotReady(what)
	}
	return st.Figures, st.Replica.Info().Generation, nil
}

// figuresAnswer serves the answer of key, built from f on a miss. check,
// when not nil, may refuse the request (a 404) before the cache is
// consulted. The caller builds key in a buffer of its own: passed to a
// function value, the buffer would move to the heap.
func (s *API) figuresAnswer(c *fiber.Ctx, f *views.Figures, key answer.Key, build func(*views.Figures) any, check func(*views.Figures) error) error {
	if check != nil {
		if err := check(f); err != nil {
			return err
		}
	}
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		return answer.JSON(build(f))
	})
	if err != nil {
		return err
	}
	return answer.Send(c, a, answer.Private)
}

// editionAnswer serves an edition, cached by week and edition count.
func (s *API) editionAnswer(c *fiber.Ctx, eds *editions.Set, e *editions.Edition) error {
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/api/v1/week/:id", uint64(eds.Len())).Str("w", e.Week)
	a, err := s.answers.Get(key, func() (*answer.Answer, error) { return answer.JSON(e) })
	if err != nil {
		return err
	}
	return answer.Send(c, a, answer.Private)
}

// getCategories answers GET /api/v1/categories/{store}.
func (s *API) getCategories(c *fiber.Ctx) error {
	store, err := storeParam(c)
	if err != nil {
		return err
	}
	f, gen, err := s.figures("The store's categories are")
	if err != nil {
		return err
	}
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/api/v1/categories/:store", gen).Int("s", int64(store))
	return s.figuresAnswer(c, f, key, func(f *views.Figures) any {
		return fiber.Map{"store": store.String(), "categories": f.Categories(store)}
	}, nil)
}

// getStats answers GET /api/v1/stores/{store}/stats.
func (s *API) getStats(c *fiber.Ctx) error {
	store, err := storeParam(c)
	if err != nil {
		return err
	}
	f, gen, err := s.figures("The store's statistics are")
	if err != nil {
		return err
	}
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/api/v1/stores/:store/stats", gen).Int("s", int64(store))
	return s.figuresAnswer(c, f, key, func(f *views.Figures) any {
		return f.Stats(store)
	}, nil)
}

// getLatestWeek answers GET /api/v1/week.
func (s *API) getLatestWeek(c *fiber.Ctx) error {
	eds := s.editions.Load()
	e := eds.Latest()
	if e == nil {
		return problem.NotReady("Weekly editions are")
	}
	return s.editionAnswer(c, eds, e)
}

// getWeek answers GET /api/v1/week/{id}.
func (s *API) getWeek(c *fiber.Ctx) error {
	w, err := editions.ParseWeek(c.Params("id"))
	if err != nil {
		return problem.New(http.StatusBadRequest, err.Error())
	}
	eds := s.editions.Load()
	if eds == nil {
		return problem.NotReady("Weekly editions are")
	}
	e := eds.Get(w)
	if e == nil {
		return problem.Newf(http.StatusNotFound, "There is no edition of week %s: editions exist for complete weeks in the data, the latest being %s.", w, eds.Latest().Week)
	}
	return s.editionAnswer(c, eds, e)
}
