package pages

import (
	"net/url"
	"strconv"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
)

// listingChangesHandler answers GET /listings/{store}/{id}/changes: the
// v1 read of the listing's changes, newest first, eventsPageSize a page
// (limit asks for another size), older pages by cursor, written as a
// page; or as the API's CSV and NDJSON files of the same query.
func (s *Pages) listingChangesHandler() read.Handler {
	rd := *s.api.ListingChangesRead()
	rd.Route, rd.CacheControl, rd.Page = "/listings/:store/:id/changes", pageCacheControl, answer.NoPage
	page := read.Codec[v1.ListingChanges]{Name: "html", Type: fiber.MIMETextHTML, Needs: read.Needs{Form: true, Rows: eventsPageSize},
		Encode: func(_ *fiber.Ctx, v *v1.ListingChanges) (*answer.Answer, error) {
			body, err := listingChangesPage(&v.Doc, v.Replica, v.Cursor)
			if err != nil {
				return nil, err
			}
			return pageAnswer(answer.NewKey(nil, "/listings/:store/:id/changes", 0), htmlType, body), nil
		}}
	return read.Serve(s.api.Env(), &rd, append([]read.Codec[v1.ListingChanges]{page}, v1.ListingChangesFiles()...)...)
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
