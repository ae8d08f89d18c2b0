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
	"github.com/edge-stats/edge/views/document"
)

// getEventsFeed answers GET /events.atom: the newest 50 changes the
// feed's filters keep, as Atom.
func (s *Pages) getEventsFeed(c *fiber.Ctx) (answer.Reply, error) {
	st, log, window, f, err := s.events(c)
	if err != nil {
		return answer.Reply{}, err
	}
	q := filterQuery(c)
	var buf [256]byte
	key := answer.NewKey(buf[:0], "/events.atom", st.Replica.Info().Generation).Str("q", q.Encode())
	return s.cached(key, atomType, func() ([]byte, error) {
		doc := document.NewEventPage(st.Replica, log, window, f, false, changes.Pos{}, "", feedSize)
		title := "Changes of listings"
		if len(q) > 0 {
			title += " (" + strings.ReplaceAll(q.Encode(), "&", ", ") + ")"
		}
		feed := render.Feed{Title: title, ID: "tag:edge,2026:" + withQuery("/events.atom", q), Self: withQuery("/events.atom", q), Alt: withQuery("/events", q)}
		for _, e := range doc.Events {
			feed.Entries = append(feed.Entries, render.EventEntry(pageEvent(e, st.Replica)))
		}
		return render.RenderFeed(feed, s.cfg.PublicURL)
	})
}

// getListingFeed answers GET /listings/{store}/{id}/changes.atom: the
// listing's newest 50 changes, as Atom.
func (s *Pages) getListingFeed(c *fiber.Ctx) (answer.Reply, error) {
	st, l, err := s.api.ListingParams(c)
	if err != nil {
		return answer.Reply{}, err
	}
	log, _, err := s.api.ChangeLog(st)
	if err != nil {
		return answer.Reply{}, err
	}
	var buf [160]byte
	key := answer.NewKey(buf[:0], "/listings/:store/:id/changes.atom", st.Replica.Info().Generation).Int("s", int64(l.Store)).Str("id", l.ID)
	return s.cached(key, atomType, func() ([]byte, error) {
		cs, _ := log.Listing(l.Store, l.ID, changes.Pos{}, feedSize)
		path := "/listings/" + l.Store.String() + "/" + url.PathEscape(l.ID)
		name := l.Name
		if name == "" {
			name = l.ID
		}
		feed := render.Feed{Title: "Changes of " + name + " (" + l.Store.String() + ")", ID: "tag:edge,2026:" + path + "/changes.atom",
			Self: path + "/changes.atom", Alt: path}
		for _, ch := range cs {
			feed.Entries = append(feed.Entries, render.EventEntry(pageEvent(document.NewEvent(ch, st.Replica), st.Replica)))
		}
		return render.RenderFeed(feed, s.cfg.PublicURL)
	})
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
