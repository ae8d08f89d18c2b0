package v1

import (
	"fmt"
	"net/http"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/served"
)

// StoreParam reads the {store} path parameter.
func StoreParam(c *fiber.Ctx) (views.Store, error) {
	st, err := views.ParseStore(c.Params("store"))
	if err != nil {
		return 0, problem.New(http.StatusNotFound, err.Error()).ForReaders(noStore(c.Params("store")))
	}
	return st, nil
}

// findListing returns listing (store, id) of st, or the 404 to answer.
func findListing(st *served.State, store views.Store, id string) (*views.Listing, error) {
	if l := st.Replica.Lookup(store, id); l != nil {
		return l, nil
	}
	return nil, problem.Newf(http.StatusNotFound, "There is no listing %q in store %s. Use the store's own id, as listed by /api/v1/listings?store=%s.", id, store, store).
		ForReaders(fmt.Sprintf("There is no listing %.80q in the %s store. Search for it by its name or developer.", id, store))
}

// ListingParams are the listing a listing's address names, found in the
// published state.
type ListingParams struct {
	Listing *views.Listing
}

// parseListing reads the {store} and {id} path parameters against st:
// 404 for an unknown store or listing, or one found but not read yet.
func parseListing(c *fiber.Ctx, st *served.State) (*views.Listing, error) {
	store, err := StoreParam(c)
	if err != nil {
		return nil, err
	}
	id := c.Params("id")
	l, err := findListing(st, store, id)
	if err != nil {
		return nil, err
	}
	if !l.Crawled() {
		return nil, problem.Newf(http.StatusNotFound, "Listing %q in store %s has been found but not read yet; retry after its first crawl.", id, store).
			ForReaders(fmt.Sprintf("The listing %q of the %s store has been found but not read yet: its page shows once it is.", id, store))
	}
	return l, nil
}

// ListingOf is the listing the {store} and {id} path parameters of c
// name in st: a 404 for an unknown store or listing, or one found but
// not read yet (as every read of one listing answers).
func ListingOf(c *fiber.Ctx, st *served.State) (*views.Listing, error) { return parseListing(c, st) }

// ListingKey adds listing l to k, as every read of one listing is keyed.
func ListingKey(k answer.Key, l *views.Listing) answer.Key { return listingKey(k, l) }

// listingKey adds listing l to k: every read of one listing is keyed by
// its store and id.
func listingKey(k answer.Key, l *views.Listing) answer.Key {
	return k.Int("s", int64(l.Store)).Str("id", l.ID)
}

// newListingRead declares the read of one listing's document (GET
// /api/v1/listings/{store}/{id}), built from memory.
func newListingRead() *read.Read[ListingParams, document.Listing] {
	return &read.Read[ListingParams, document.Listing]{
		Route: "/api/v1/listings/:store/:id",
		Cheap: true,
		Page:  answer.SamePage,
		Parse: func(c *fiber.Ctx, st *served.State, _ read.Needs) (ListingParams, error) {
			l, err := parseListing(c, st)
			return ListingParams{Listing: l}, err
		},
		Key: func(k answer.Key, p *ListingParams) answer.Key { return listingKey(k, p.Listing) },
		Run: func(_ *fiber.Ctx, st *served.State, p *ListingParams, _ read.Needs) (*document.Listing, error) {
			d := document.NewListing(p.Listing, st.Figures)
			return &d, nil
		},
	}
}

// listingJSON writes a listing's document as JSON.
var listingJSON = read.Codec[document.Listing]{Name: "json", Type: fiber.MIMEApplicationJSON,
	Encode: func(_ *fiber.Ctx, d *document.Listing) (*answer.Answer, error) { return answer.JSON(d) }}

// noStore is the reader's words for a store name that names none.
func noStore(name string) string {
	return fmt.Sprintf("There is no store %.40q. The stores are chrome, edge, firefox, apple and googleplay.", name)
}
