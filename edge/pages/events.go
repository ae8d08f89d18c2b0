package pages

import (
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/served"
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
var kindLabels = map[string]string{"version": "new version", "permissions": "permissions", "hostAccess": "host access",
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

// filterQuery is the query of the feed's filters as read, canonical:
// store and kind with their values trimmed, sorted and each once, blanks
// left out (the filter is the same in any order), and permission. The
// events' page and feed are keyed by it and write their links from it.
func filterQuery(c *fiber.Ctx) url.Values {
	q := url.Values{}
	for _, k := range []string{"store", "kind", "permission"} {
		v := c.Query(k)
		if k != "permission" {
			var vs []string
			for _, p := range strings.Split(v, ",") {
				if p = strings.TrimSpace(p); p != "" {
					vs = append(vs, p)
				}
			}
			slices.Sort(vs)
			v = strings.Join(slices.Compact(vs), ",")
		}
		if v != "" {
			q.Set(k, v)
		}
	}
	return q
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

// getEventsPage answers GET /events: the event feed's newest changes with
// its filters (a plain GET form), 100 a page, older pages by cursor.
func (s *Pages) getEventsPage(c *fiber.Ctx) (answer.Reply, error) {
	st, log, window, f, err := s.events(c)
	if err != nil {
		return answer.Reply{}, err
	}
	var pos changes.Pos
	cursor := c.Query("cursor")
	if cursor != "" {
		p, ok := document.ParseEventCursor(cursor)
		if !ok {
			return answer.Reply{}, v1.BadCursor()
		}
		pos = p
		cursor = document.EventCursor(p) // as read: one key for every spelling of one place
	}
	q := filterQuery(c)
	var buf [256]byte
	key := answer.NewKey(buf[:0], "/events", st.Replica.Info().Generation).Str("q", q.Encode()).Str("cursor", cursor)
	return s.cached(key, htmlType, func() ([]byte, error) {
		doc := document.NewEventPage(st.Replica, log, window, f, false, pos, "", eventsPageSize)
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
			d.Events = append(d.Events, pageEvent(e, st.Replica))
		}
		if doc.NextCursor != nil {
			older := filterQuery(c)
			older.Set("cursor", *doc.NextCursor)
			d.Older = "/events?" + older.Encode()
		}
		if cursor != "" {
			d.Newest = withQuery("/events", filterQuery(c))
		}
		return render.RenderEvents(d)
	})
}

// events reads what the events' page and feed show, as the API's event
// feed does: the published state, its change log and the window it
// covers, and the filters c asks for.
func (s *Pages) events(c *fiber.Ctx) (st *served.State, log *changes.Log, window document.EventWindow, f changes.Filter, err error) {
	if st, err = s.api.Current(); err != nil {
		return
	}
	if log, window, err = s.api.ChangeLog(st); err != nil {
		return
	}
	f, err = v1.EventFilter(c)
	return
}
