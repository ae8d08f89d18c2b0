package pages

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
)

// getListingChangesPage answers GET /listings/{store}/{id}/changes: the
// listing's changes, newest first, 50 a page, older pages by cursor; the
// same query as /api/v1/listings/{store}/{id}/changes, written as a page.
func (s *Pages) getListingChangesPage(c *fiber.Ctx) (answer.Reply, error) {
	st, err := s.api.Current()
	if err != nil {
		return answer.Reply{}, err
	}
	a, err := s.api.ListingChanges(c, "/listings/:store/:id/changes", eventsPageSize, func(k answer.Key) answer.Key { return k },
		func(doc *document.ListingChanges) (*answer.Answer, error) {
			body, err := listingChangesPage(doc, st.Replica, c.Query("cursor"))
			if err != nil {
				return nil, err
			}
			return pageAnswer(answer.NewKey(nil, "/listings/:store/:id/changes", 0), htmlType, body), nil
		})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: pageCacheControl}, nil
}

// listingChangesPage is the page of doc, a listing's changes from cursor
// ("": the newest), its listing looked up in r.
func listingChangesPage(doc *document.ListingChanges, r interface {
	Lookup(views.Store, string) *views.Listing
}, cursor string) ([]byte, error) {
	path := "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID)
	name := doc.ID
	if st, err := views.ParseStore(doc.Store); err == nil {
		if l := r.Lookup(st, doc.ID); l != nil && l.Name != "" {
			name = l.Name
		}
	}
	twin := url.Values{"limit": {strconv.Itoa(eventsPageSize)}}
	if cursor != "" {
		twin.Set("cursor", cursor)
	}
	d := render.EventsPage{Title: "Changes of " + name + " (" + doc.Store + ")",
		Intro:   "What changed in the listing's metadata, newest first, from " + doc.Window.From.Format("2006-01-02") + ". Its page: " + name + ".",
		JSONURL: "/api/v1" + path + "/changes?" + twin.Encode(), AtomURL: path + "/changes.atom", Listing: path}
	for _, e := range doc.Changes {
		d.Events = append(d.Events, pageEvent(e, r))
	}
	if doc.NextCursor != nil {
		d.Older = path + "/changes?" + url.Values{"cursor": {*doc.NextCursor}}.Encode()
	}
	if cursor != "" {
		d.Newest = path + "/changes"
	}
	return render.RenderEvents(d)
}
