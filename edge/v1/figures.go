package v1

import (
	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views/figures"
)

// Figures returns the published figures and the generation of the views,
// or a 503 naming what ("Charts are") until the figures are built.
func (s *API) Figures(what string) (*figures.Figures, uint64, error) {
	st := s.state.Load()
	if st == nil || st.Figures == nil {
		return nil, 0, problem.NotReady(what)
	}
	return st.Figures, st.Replica.Info().Generation, nil
}

// figuresAnswer serves the answer of key, built from f on a miss. The caller builds key in a buffer of its own: passed to a
// function value, the buffer would move to the heap.
func (s *API) figuresAnswer(c *fiber.Ctx, f *figures.Figures, key answer.Key, build func(*figures.Figures) any) (answer.Reply, error) {
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		return answer.JSON(build(f))
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// getCategories answers GET /api/v1/categories/{store}.
func (s *API) getCategories(c *fiber.Ctx) (answer.Reply, error) {
	store, err := StoreParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.Figures("The store's categories are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/api/v1/categories/:store", gen).Int("s", int64(store))
	return s.figuresAnswer(c, f, key, func(f *figures.Figures) any {
		return fiber.Map{"store": store.String(), "categories": f.Categories(store)}
	})
}

// getStats answers GET /api/v1/stores/{store}/stats.
func (s *API) getStats(c *fiber.Ctx) (answer.Reply, error) {
	store, err := StoreParam(c)
	if err != nil {
		return answer.Reply{}, err
	}
	f, gen, err := s.Figures("The store's statistics are")
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [64]byte
	key := answer.NewKey(buf[:0], "/api/v1/stores/:store/stats", gen).Int("s", int64(store))
	return s.figuresAnswer(c, f, key, func(f *figures.Figures) any {
		return f.Stats(store)
	})
}
