package pages

import (
	"maps"
	"net/url"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
)

// The pages' and feeds' sizes: events a page, entries a feed.
const (
	eventsPageSize = 50
	feedSize       = 50
)

// twinQuery is the query of the JSON twin of the events' page of filters
// q at cursor: the same events, eventsPageSize of them.
func twinQuery(q url.Values, cursor string) url.Values {
	t := url.Values{}
	for k, v := range q {
		t[k] = v
	}
	t.Set("limit", strconv.Itoa(eventsPageSize))
	if cursor != "" {
		t.Set("cursor", cursor)
	}
	return t
}

// kindLabels are the kinds of change in words, as the pages name them.
var kindLabels = map[string]string{"version": "new version", "permissions": "permissions", "hostAccess": "sites it may reach",
	"manifestVersion": "manifest version", "accessLevel": "access level", "developer": "new developer", "name": "renamed",
	"category": "new category", "featured": "featured", "delisted": "left the store", "relisted": "back in the store",
	"takeover": "takeover: new owner, then more access"}

// eventWords says an event in words: "5.14.4 → 5.14.5", "added tabs".
func eventWords(e document.Event) string {
	opt := func(p *string) string {
		if p == nil || *p == "" {
			return "none"
		}
		return *p
	}
	if e.Kind == changes.Takeover.String() {
		w := "changed hands (" + opt(e.Before) + " → " + opt(e.After) + "), then asked for more: "
		if len(e.Added) == 0 {
			return w + "a higher access level"
		}
		return w + "added " + strings.Join(e.Added, ", ")
	}
	var parts []string
	if len(e.Added) > 0 {
		parts = append(parts, "added "+strings.Join(e.Added, ", "))
	}
	if len(e.Removed) > 0 {
		parts = append(parts, "removed "+strings.Join(e.Removed, ", "))
	}
	if e.Widened != nil && *e.Widened {
		parts = append(parts, "it may now reach hosts it could not")
	}
	if len(parts) > 0 {
		return strings.Join(parts, "; ")
	}
	switch e.Kind {
	case "featured":
		if e.After != nil && *e.After == "true" {
			return "the store now features it"
		}
		return "the store no longer features it"
	case "delisted":
		return "left the store"
	case "relisted":
		return "back in the store"
	}
	return opt(e.Before) + " → " + opt(e.After)
}

// pageEvent is e, an event of r's log, as a page and a feed give it: it
// links to its listing's page when the listing has one (it was read).
func pageEvent(e document.Event, r interface {
	Lookup(views.Store, string) *views.Listing
}) render.Event {
	name := e.ID
	if e.Name != nil && *e.Name != "" {
		name = *e.Name
	}
	out := render.Event{ID: e.EventID, At: e.At, Store: e.Store, Name: name, Kind: e.Kind, Label: kindLabels[e.Kind], What: eventWords(e),
		Warn: e.Kind == changes.Takeover.String()}
	if st, err := views.ParseStore(e.Store); err == nil {
		if l := r.Lookup(st, e.ID); l != nil && l.Crawled() {
			out.URL = "/listings/" + e.Store + "/" + url.PathEscape(e.ID)
			out.Changes = out.URL + "/changes"
		}
	}
	return out
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// eventsHandler answers GET /events: the v1 event feed's read, its
// newest changes with its filters (a plain GET form), eventsPageSize a
// page, older pages by cursor, as the events' page; or as the API's CSV
// and NDJSON files of the same query (format=, or an Accept that prefers
// them), public as every page is.
func (s *Pages) eventsHandler() read.Handler {
	rd := *s.api.EventsRead()
	rd.Route, rd.CacheControl, rd.Page = "/events", pageCacheControl, answer.NoPage
	page := read.Codec[v1.Events]{Name: "html", Type: fiber.MIMETextHTML, Needs: read.Needs{Form: true, Rows: eventsPageSize}, Encode: eventsHTML}
	return read.Serve(s.api.Env(), &rd, append([]read.Codec[v1.Events]{page}, v1.EventsFiles()...)...)
}

// eventsHTML writes v, a page of the event feed, as the events' page.
func eventsHTML(_ *fiber.Ctx, v *v1.Events) (*answer.Answer, error) {
	q, cursor, window, doc := v.Params.Form, v.Params.Cursor, v.Doc.Window, &v.Doc
	d := render.EventsPage{Title: "Changes of listings", FormAction: "/events", Permission: q.Get("permission"),
		Intro:   "What changed in listings' metadata (a new version, permissions, a new developer, …), newest first, from " + window.From.Format("2006-01-02") + ".",
		JSONURL: withQuery("/api/v1/events", twinQuery(q, cursor)), AtomURL: withQuery("/events.atom", q)}
	stores := strings.Split(q.Get("store"), ",")
	for _, st := range views.Stores {
		d.Stores = append(d.Stores, render.Option{Value: st.String(), Label: st.String(), Selected: len(stores) == 1 && stores[0] == st.String()})
	}
	for _, k := range changes.Kinds() {
		d.Kinds = append(d.Kinds, render.Option{Value: k.String(), Label: kindLabels[k.String()], Selected: q.Get("kind") == k.String()})
	}
	for _, e := range doc.Events {
		d.Events = append(d.Events, pageEvent(e, v.Replica))
	}
	if doc.NextCursor != nil {
		older := maps.Clone(q)
		older.Set("cursor", *doc.NextCursor)
		d.Older = "/events?" + older.Encode()
	}
	if cursor != "" {
		d.Newest = withQuery("/events", q)
	}
	body, err := render.RenderEvents(d)
	if err != nil {
		return nil, err
	}
	return pageAnswer(answer.NewKey(nil, "/events", 0), htmlType, body), nil
}
