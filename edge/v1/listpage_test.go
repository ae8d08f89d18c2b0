package v1

import (
	"testing"

	"github.com/edge-stats/edge/internal/jsonw/jsonwtest"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// TestListPageAppendsAsMarshal checks that a page of listings (document.ListingPage)
// is written as encoding/json writes its documents, byte for byte: a page
// of every store's listings, with a cursor and cut short, and an empty
// one. Each document's own encoding is checked in package document.
func TestListPageAppendsAsMarshal(t *testing.T) {
	synth := replicatest.Synth(3000, nil)
	f := figures.Build(synth, 0)
	var page listAnswer
	var pageOf []*views.Listing
	for i := range 50 {
		l := f.Replica().At(int32(i * 7))
		page.Listings = append(page.Listings, document.NewListing(l, f))
		pageOf = append(pageOf, l)
	}
	jsonwtest.Check(t, "a page", page, &document.ListingPage{Listings: pageOf, Figures: f})
	cursor := "abc"
	page.NextCursor, page.Partial = &cursor, true
	jsonwtest.Check(t, "a page with a cursor", page, &document.ListingPage{Listings: pageOf, Figures: f, NextCursor: &cursor, Partial: true})
	jsonwtest.Check(t, "an empty page", listAnswer{Listings: []document.Listing{}}, &document.ListingPage{})
}

// listAnswer is the answer of GET /api/v1/listings as a Go value, which
// document.ListingPage writes without building.
type listAnswer struct {
	Listings   []document.Listing `json:"listings"`
	NextCursor *string            `json:"nextCursor"`
	Partial    bool               `json:"partial"` // q's search ran past its time budget; no next page is offered
}
