package v1

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/served"
)

// MissCaller returns who c's misses are computed for at the miss gate
// (its key, or its address): a page that reads ClickHouse on a miss
// waits for a turn there, as the API's reads do.
func (s *API) MissCaller(c *fiber.Ctx) missgate.Caller { return s.gate.MissCaller(c) }

// state returns the published state, or a 503 problem before the first load.
func (s *API) Current() (*served.State, error) {
	st := s.state.Load()
	if st == nil {
		return nil, problem.New(http.StatusServiceUnavailable,
			"The listing replica is still loading after a restart. Retry in a few seconds.").RetryAfter(5).
			ForReaders("The listings are still loading after a restart.")
	}
	return st, nil
}

// StoreParam reads the {store} path parameter.
func StoreParam(c *fiber.Ctx) (views.Store, error) {
	st, err := views.ParseStore(c.Params("store"))
	if err != nil {
		return 0, problem.New(http.StatusNotFound, err.Error()).ForReaders(noStore(c.Params("store")))
	}
	return st, nil
}

// ListingParams reads the {store} and {id} path parameters of a listing's
// address and finds the listing in the current state: 404 for an unknown
// store or listing, or one found but not read yet.
func (s *API) ListingParams(c *fiber.Ctx) (st *served.State, l *views.Listing, err error) {
	store, err := StoreParam(c)
	if err != nil {
		return nil, nil, err
	}
	if st, err = s.Current(); err != nil {
		return nil, nil, err
	}
	id := c.Params("id")
	if l, err = findListing(st, store, id); err != nil {
		return nil, nil, err
	}
	if !l.Crawled() {
		return nil, nil, problem.Newf(http.StatusNotFound, "Listing %q in store %s has been found but not read yet; retry after its first crawl.", id, store).
			ForReaders(fmt.Sprintf("The listing %q of the %s store has been found but not read yet: its page shows once it is.", id, store))
	}
	return st, l, nil
}

// findListing returns listing (store, id) of st, or the 404 to answer.
func findListing(st *served.State, store views.Store, id string) (*views.Listing, error) {
	if l := st.Replica.Lookup(store, id); l != nil {
		return l, nil
	}
	return nil, problem.Newf(http.StatusNotFound, "There is no listing %q in store %s. Use the store's own id, as listed by /api/v1/listings?store=%s.", id, store, store).
		ForReaders(fmt.Sprintf("There is no listing %.80q in the %s store. Search for it by its name or developer.", id, store))
}

// getListing answers GET /api/v1/listings/{store}/{id}.
func (s *API) getListing(c *fiber.Ctx) (answer.Reply, error) {
	st, l, err := s.ListingParams(c)
	if err != nil {
		return answer.Reply{}, err
	}
	store, id := l.Store, l.ID
	var buf [128]byte
	key := answer.NewKey(buf[:0], "/api/v1/listings/:store/:id", st.Replica.Info().Generation).Int("s", int64(store)).Str("id", id)
	a, err := s.answers.Get(key, func() (*answer.Answer, error) { return answer.JSON(document.NewListing(l, st.Figures)) })
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// noStore is the reader's words for a store name that names none.
func noStore(name string) string {
	return fmt.Sprintf("There is no store %.40q. The stores are chrome, edge, firefox, apple and googleplay.", name)
}
