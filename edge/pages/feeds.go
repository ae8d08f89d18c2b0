package pages

import (
	"net/url"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/served"
)

// eventsFeedHandler answers GET /events.atom: the v1 event feed's read,
// the newest feedSize changes its filters keep, as Atom.
func (s *Pages) eventsFeedHandler() read.Handler {
	rd := *s.api.EventsRead()
	rd.Route, rd.CacheControl, rd.Page = "/events.atom", pageCacheControl, answer.NoPage
	parse := rd.Parse
	rd.Parse = func(c *fiber.Ctx, st *served.State, n read.Needs) (v1.EventsParams, error) {
		p, err := parse(c, st, n)
		p.Pos, p.Cursor = changes.Pos{}, "" // a feed is the newest
		return p, err
	}
	return read.Serve(s.api.Env(), &rd, read.Codec[v1.Events]{Name: "atom", Type: atomMedia, Needs: read.Needs{Form: true, Rows: feedSize},
		Encode: s.eventsAtom})
}

// eventsAtom writes v, the feed's newest changes, as Atom.
func (s *Pages) eventsAtom(_ *fiber.Ctx, v *v1.Events) (*answer.Answer, error) {
	q := v.Params.Form
	title := "Changes of listings"
	if len(q) > 0 {
		title += " (" + strings.ReplaceAll(q.Encode(), "&", ", ") + ")"
	}
	feed := render.Feed{Title: title, ID: "tag:edge,2026:" + withQuery("/events.atom", q), Self: withQuery("/events.atom", q), Alt: withQuery("/events", q)}
	for _, e := range v.Doc.Events {
		feed.Entries = append(feed.Entries, render.EventEntry(pageEvent(e, v.Replica)))
	}
	body, err := render.RenderFeed(feed, s.cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	return pageAnswer(answer.NewKey(nil, "/events.atom", 0), atomType, body), nil
}

// listingFeedHandler answers GET /listings/{store}/{id}/changes.atom:
// the v1 read of the listing's changes, its newest feedSize, as Atom; a
// listing found but not read yet has no feed (it has no page).
func (s *Pages) listingFeedHandler() read.Handler {
	rd := *s.api.ListingChangesRead()
	rd.Route, rd.CacheControl, rd.Page = "/listings/:store/:id/changes.atom", pageCacheControl, answer.NoPage
	parse := rd.Parse
	rd.Parse = func(c *fiber.Ctx, st *served.State, n read.Needs) (v1.ListingChangesParams, error) {
		p, err := parse(c, st, n)
		if err != nil {
			return p, err
		}
		if err := v1.NotRead(p.Listing); err != nil {
			return p, err
		}
		p.Before, p.Cursor, p.Limit = changes.Pos{}, "", feedSize // a feed is the newest
		return p, nil
	}
	return read.Serve(s.api.Env(), &rd, read.Codec[v1.ListingChanges]{Name: "atom", Type: atomMedia, Encode: s.listingAtom})
}

// listingAtom writes v, a listing's newest changes, as Atom.
func (s *Pages) listingAtom(_ *fiber.Ctx, v *v1.ListingChanges) (*answer.Answer, error) {
	st, _ := views.ParseStore(v.Doc.Store)
	l := v.Replica.Lookup(st, v.Doc.ID)
	path := "/listings/" + v.Doc.Store + "/" + url.PathEscape(v.Doc.ID)
	name := v.Doc.ID
	if l != nil && l.Name != "" {
		name = l.Name
	}
	feed := render.Feed{Title: "Changes of " + name + " (" + v.Doc.Store + ")", ID: "tag:edge,2026:" + path + "/changes.atom",
		Self: path + "/changes.atom", Alt: path}
	for _, e := range v.Doc.Changes {
		feed.Entries = append(feed.Entries, render.EventEntry(pageEvent(e, v.Replica)))
	}
	body, err := render.RenderFeed(feed, s.cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	return pageAnswer(answer.NewKey(nil, "/listings/:store/:id/changes.atom", 0), atomType, body), nil
}

// weeksFeedHandler answers GET /weeks.atom: the v1 list of editions as
// Atom, an entry an edition, newest first.
func (s *Pages) weeksFeedHandler() read.Handler {
	rd := *s.api.WeeksRead()
	rd.Route, rd.CacheControl, rd.Page = "/weeks.atom", pageCacheControl, answer.NoPage
	return read.Serve(s.api.Env(), &rd, read.Codec[v1.Weeks]{Name: "atom", Type: atomMedia, Encode: s.weeksAtom})
}

// weeksAtom writes the newest feedSize editions of ws as Atom.
func (s *Pages) weeksAtom(_ *fiber.Ctx, ws *v1.Weeks) (*answer.Answer, error) {
	eds := ws.Set
	feed := render.Feed{Title: "Weekly editions", ID: "tag:edge,2026:/weeks.atom", Self: "/weeks.atom", Alt: "/weeks"}
	for _, w := range eds.Weeks()[:min(feedSize, len(eds.Weeks()))] {
		e := eds.Get(w)
		summary := "The week " + e.Start + " to " + e.Last + ":"
		for _, st := range views.Stores {
			if se := e.Stores[st.String()]; se != nil {
				summary += " " + st.String() + " " + render.Int(int64(se.Totals.Live)) + " live (" + render.Signed(int64(se.Totals.LiveChange)) + ");"
			}
		}
		feed.Entries = append(feed.Entries, render.FeedEntry{ID: "tag:edge,2026:week:" + e.Week, Title: "Week " + e.Week,
			URL: "/week/" + e.Week, Summary: summary, Updated: e.Cutoff.UTC()})
	}
	body, err := render.RenderFeed(feed, s.cfg.PublicURL)
	if err != nil {
		return nil, err
	}
	return pageAnswer(answer.NewKey(nil, "/weeks.atom", 0), atomType, body), nil
}

// atomMedia is the media type of the feeds, as an Accept field names it.
const atomMedia = "application/atom+xml"
