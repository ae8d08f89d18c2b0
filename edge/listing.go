package edge

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/utils"

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

// listingParams reads the {store} and {id} path parameters of a listing's
// address and finds the listing in the current state: 404 for an unknown
// store or listing, or one found but not read yet.
func (s *Server) listingParams(c *fiber.Ctx) (st *views.State, l *views.Listing, err error) {
	store, err := storeParam(c)
	if err != nil {
		return nil, nil, err
	}
	if st, err = s.current(); err != nil {
		return nil, nil, err
	}
	id := c.Params("id")
	if l = st.Replica.Lookup(store, id); l == nil {
		return nil, nil, Problemf(http.StatusNotFound, "There is no listing %q in store %s. Use the store's own id, as listed by /api/v1/listings?store=%s.", id, store, store)
	}
	if !l.Crawled() {
		return nil, nil, Problemf(http.StatusNotFound, "Listing %q in store %s has been found but not read yet; retry after its first crawl.", id, store)
	}
	return st, l, nil
}

// readProblem is the answer when a read-through from ClickHouse fails:
// 503 with Retry-After 5, saying whether the time budget ran out.
func (s *Server) readProblem(what string, err error) *Problem {
	s.log.Warn("read-through failed", "what", what, "err", err)
	if errors.Is(err, context.DeadlineExceeded) || strings.Contains(err.Error(), "Timeout exceeded") {
		return Problemf(http.StatusServiceUnavailable, "Reading %s took longer than the time budget; narrow the request or retry in a few seconds.", what).RetryAfter(5)
	}
	return Problemf(http.StatusServiceUnavailable, "%s cannot be read for a moment; retry in a few seconds.", upperFirst(what)).RetryAfter(5)
}

func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// getListing answers GET /api/v1/listings/{store}/{id}.
func (s *Server) getListing(c *fiber.Ctx) error {
	st, l, err := s.listingParams(c)
	if err != nil {
		return err
	}
	store, id := l.Store, l.ID
	var buf [128]byte
	key := strconv.AppendUint(append(buf[:0], "v1:listing:"...), st.Replica.Info().Generation, 10)
	key = append(append(append(append(key, ':'), store.String()...), ':'), id...)
	a, err := s.answers.get(utils.UnsafeString(key), func() (*Answer, error) { return JSONAnswer(views.NewListingDoc(l, st.Figures)) })
	if err != nil {
		return err
	}
	return send(c, a, cachePrivate)
}

// figuresAnswer serves an answer computed from the published figures,
// cached per generation under key. check, when not nil, may refuse the
// request (a 404) before the cache is consulted. what names the figures
// in the 503 sent before they are computed.
func (s *Server) figuresAnswer(c *fiber.Ctx, what func() string, key string, build func(*views.Figures) any, check func(*views.Figures) error) error {
	st := s.state.Load()
	if st == nil || st.Figures == nil {
		return notReady(what())
	}
	f := st.Figures
	if check != nil {
		if err := check(f); err != nil {
			return err
		}
	}
	var buf [128]byte
	k := append(append(append(buf[:0], "v1:"...), key...), ':')
	k = strconv.AppendUint(k, st.Replica.Info().Generation, 10)
	a, err := s.answers.get(utils.UnsafeString(k), func() (*Answer, error) {
		return JSONAnswer(build(f))
	})
	if err != nil {
		return err
	}
	return send(c, a, cachePrivate)
}

// editionAnswer serves an edition, cached by week and edition count.
func (s *Server) editionAnswer(c *fiber.Ctx, eds *views.Editions, e *views.Edition) error {
	a, err := s.answers.get("v1:week:"+e.Week+":"+strconv.Itoa(eds.Len()), func() (*Answer, error) { return JSONAnswer(e) })
	if err != nil {
		return err
	}
	return send(c, a, cachePrivate)
}

// notReady is the spec's answer for a figure computed in the background
// that is not built yet after a restart.
func notReady(what string) *Problem {
	return Problemf(http.StatusServiceUnavailable,
		"%s computed in the background after a restart and not ready yet. Retry in a minute.", what).RetryAfter(60)
}

// getCategories answers GET /api/v1/categories/{store}.
func (s *Server) getCategories(c *fiber.Ctx) error {
	store, err := storeParam(c)
	if err != nil {
		return err
	}
	return s.figuresAnswer(c, func() string { return "The categories of " + store.String() + " are" }, "categories:"+store.String(), func(f *views.Figures) any {
		return fiber.Map{"store": store.String(), "categories": nonNilSlice(f.Categories(store))}
	}, nil)
}

// getStats answers GET /api/v1/stores/{store}/stats.
func (s *Server) getStats(c *fiber.Ctx) error {
	store, err := storeParam(c)
	if err != nil {
		return err
	}
	return s.figuresAnswer(c, func() string { return "The statistics of " + store.String() + " are" }, "stats:"+store.String(), func(f *views.Figures) any {
		return f.Stats(store)
	}, nil)
}

// getLatestWeek answers GET /api/v1/week.
func (s *Server) getLatestWeek(c *fiber.Ctx) error {
	eds := s.editions.Load()
	e := eds.Latest()
	if e == nil {
		return notReady("Weekly editions are")
	}
	return s.editionAnswer(c, eds, e)
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
	return s.editionAnswer(c, eds, e)
}

func nonNilSlice[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
