package v1

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/eventfilter"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/stream"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/served"
)

const (
	eventsDefaultLimit = 100
	eventsMaxLimit     = 1000
)

// ChangeLog returns the published state and its change log, or a 503
// while the log loads.
func (s *API) ChangeLog(st *served.State) (*changes.Log, document.EventWindow, error) {
	log := st.Replica.Changes()
	if log == nil {
		return nil, document.EventWindow{}, problem.New(http.StatusServiceUnavailable,
			"The listings' change log is still loading after a restart. Retry in a minute.").RetryAfter(30).
			ForReaders("The changes of listings are still loading after a restart.")
	}
	return log, document.EventWindow{From: time.Unix(log.From(), 0).UTC(), To: st.Replica.Info().ListingsMark.UTC()}, nil
}

// limitParam reads limit (1 to max, default def).
func limitParam(c *fiber.Ctx, def, max int) (int, error) {
	raw := c.Query("limit")
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 || n > max {
		return 0, problem.Newf(http.StatusBadRequest, "limit: %.40q is not a whole number from 1 to %d (default %d).", raw, max, def).
			ForReaders(fmt.Sprintf("A page shows 1 to %d changes, no more.", max))
	}
	return n, nil
}

// getListingChanges answers GET /api/v1/listings/{store}/{id}/changes
// (and .csv): the listing's changes, newest first, cursor-paged.
func (s *API) getListingChanges(c *fiber.Ctx) (answer.Reply, error) {
	asCSV := wantsCSV(c)
	a, err := s.ListingChanges(c, "/api/v1/listings/:store/:id/changes", eventsDefaultLimit, func(k answer.Key) answer.Key { return k.Int("csv", b2i(asCSV)) },
		func(out *document.ListingChanges) (*answer.Answer, error) {
			if asCSV {
				return eventsCSV(out.Changes)
			}
			return answer.JSON(out)
		})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// ListingChanges answers c's listing changelog on route (the API's or the
// page's): one preamble (the listing, the change log, limit, cursor), one
// query, and its typed result written by codec, cached per view
// generation under the route's key of the listing and page with what key
// adds for the codec. A listing delisted before its first reading has a
// changelog too: only an unknown listing is a 404.
func (s *API) ListingChanges(c *fiber.Ctx, route string, defLimit int, key func(answer.Key) answer.Key, codec func(*document.ListingChanges) (*answer.Answer, error)) (*answer.Answer, error) {
	store, err := StoreParam(c)
	if err != nil {
		return nil, err
	}
	st, err := s.Current()
	if err != nil {
		return nil, err
	}
	l, err := findListing(st, store, c.Params("id"))
	if err != nil {
		return nil, err
	}
	log, window, err := s.ChangeLog(st)
	if err != nil {
		return nil, err
	}
	limit, err := limitParam(c, defLimit, eventsMaxLimit)
	if err != nil {
		return nil, err
	}
	var before changes.Pos
	if raw := c.Query("cursor"); raw != "" {
		p, ok := document.ParseEventCursor(raw)
		if !ok || p.Store != l.Store || p.ID != l.ID {
			return nil, problem.New(http.StatusBadRequest, "cursor: pass the nextCursor of this listing's previous page unchanged; omit it for the newest changes.").
				ForReaders(staleNext)
		}
		before = p
	}
	var buf [640]byte
	k := key(answer.NewKey(buf[:0], route, st.Replica.Info().Generation).
		Int("s", int64(l.Store)).Str("id", l.ID).Int("limit", int64(limit)).
		Int("t", before.At).Int("cs", int64(before.Store)).Str("ci", before.ID).Int("ck", int64(before.Kind)))
	return s.answers.Get(k, func() (*answer.Answer, error) {
		cs, more := log.Listing(l.Store, l.ID, before, limit)
		out := document.ListingChanges{Store: l.Store.String(), ID: l.ID, Window: window, Changes: make([]document.Event, len(cs))}
		for i, ch := range cs {
			out.Changes[i] = document.NewEvent(ch, st.Replica)
		}
		if more {
			out.NextCursor = &out.Changes[len(out.Changes)-1].EventID
		}
		return codec(&out)
	})
}

// EventFilter reads the feed's filters: store and kind (each one name or
// several, comma-separated) and permission.
func EventFilter(c *fiber.Ctx) (changes.Filter, error) {
	return eventfilter.Parse(c.Query("store"), c.Query("kind"), c.Query("permission"))
}

// sinceEvent reads since: an event's cursor (eventId or nextCursor), a
// time (RFC 3339: the events strictly after it) or a date (the events on
// that day or later).
func sinceEvent(raw string) (changes.Pos, error) {
	if at, ok := sinceInstant(raw); ok {
		return changes.Pos{At: at, Store: views.NumStores}, nil // after every event at that second
	}
	if p, ok := document.ParseEventCursor(raw); ok {
		return p, nil
	}
	return changes.Pos{}, problem.New(http.StatusBadRequest,
		"since: send an eventId or the nextCursor of the previous answer unchanged, a time (RFC 3339, such as 2026-03-01T00:00:00Z) or a date (yyyy-MM-dd); omit it for the newest events first.")
}

// getEvents answers GET /api/v1/events (and .csv): the store-wide feed of
// changes. Without since, newest first, paged back with cursor; with
// since, oldest first from there, and nextCursor only moves forward (it
// stays at since when nothing is newer: ask again later).
func (s *API) getEvents(c *fiber.Ctx) (answer.Reply, error) {
	st, err := s.Current()
	if err != nil {
		return answer.Reply{}, err
	}
	log, window, err := s.ChangeLog(st)
	if err != nil {
		return answer.Reply{}, err
	}
	f, err := EventFilter(c)
	if err != nil {
		return answer.Reply{}, err
	}
	limit, err := limitParam(c, eventsDefaultLimit, eventsMaxLimit)
	if err != nil {
		return answer.Reply{}, err
	}
	since, cursor := c.Query("since"), c.Query("cursor")
	var pos changes.Pos
	forward := since != ""
	switch {
	case forward && cursor != "":
		return answer.Reply{}, problem.New(http.StatusBadRequest, "since and cursor: send one. since reads forward from a place, oldest first; cursor pages back through the newest first.")
	case forward:
		if pos, err = sinceEvent(since); err != nil {
			return answer.Reply{}, err
		}
	case cursor != "":
		p, ok := document.ParseEventCursor(cursor)
		if !ok {
			return answer.Reply{}, BadCursor()
		}
		pos = p
	}
	asCSV := wantsCSV(c)
	var buf [768]byte
	key := answer.NewKey(buf[:0], "/api/v1/events", st.Replica.Info().Generation).
		Int("fwd", b2i(forward)).Int("t", pos.At).Int("ps", int64(pos.Store)).Str("pi", pos.ID).Int("pk", int64(pos.Kind)).
		Int("limit", int64(limit)).Str("perm", f.Permission).Int("csv", b2i(asCSV))
	for _, st := range f.Stores {
		key = key.Int("s", int64(st))
	}
	for _, k := range f.Kinds {
		key = key.Int("k", int64(k))
	}
	a, err := s.answers.Get(key, func() (*answer.Answer, error) {
		out := document.NewEventPage(st.Replica, log, window, f, forward, pos, since, limit)
		if asCSV {
			return eventsCSV(out.Events)
		}
		return answer.JSON(out)
	})
	if err != nil {
		return answer.Reply{}, err
	}
	return answer.Reply{Answer: a, CacheControl: answer.Private}, nil
}

// eventsCSV is a page of events as CSV: one change a row; added and
// removed names separated by spaces.
func eventsCSV(es []document.Event) (*answer.Answer, error) {
	rows := make([][]string, len(es))
	opt := func(p *string) string {
		if p == nil {
			return ""
		}
		return answer.CSVText(*p)
	}
	for i, e := range es {
		widened := ""
		if e.Widened != nil {
			widened = strconv.FormatBool(*e.Widened)
		}
		rows[i] = []string{e.At.Format(time.RFC3339), e.Store, answer.CSVText(e.ID), opt(e.Name), e.Kind, opt(e.Before), opt(e.After),
			answer.CSVText(strings.Join(e.Added, " ")), answer.CSVText(strings.Join(e.Removed, " ")), widened, e.EventID}
	}
	return answer.CSV([]string{"at", "store", "id", "name", "kind", "before", "after", "added", "removed", "widened", "event_id"}, rows)
}

// EncodeEvent renders c, a change of r's log, as the event stream sends
// it: its eventId, and its document as one line of JSON.
func EncodeEvent(c *changes.Change, r *replica.Replica) (id string, data []byte) {
	d := document.NewEvent(c, r)
	data, _ = json.Marshal(&d) // strings, times and slices: never fails
	return d.EventID, data
}

// getEventStream answers GET /api/v1/events/stream: the events of the
// feed as server-sent events, as the edge publishes them, with the
// feed's filters; Last-Event-ID (or since) resumes after an event. It
// needs a key; the streams are bounded per key and per edge.
func (s *API) getEventStream(c *fiber.Ctx) error {
	if s.stream == nil {
		return problem.New(http.StatusServiceUnavailable, "This edge streams no events; ask another edge of the service, or poll /api/v1/events with since.").RetryAfter(60)
	}
	key := ""
	if s.gate != nil {
		key = s.gate.MissCaller(c).Key
	}
	if key == "" {
		return problem.New(http.StatusUnauthorized, "The event stream needs a key: send Authorization: Bearer <key> (make one at /account).").
			WithHeader(fiber.HeaderWWWAuthenticate, `Bearer realm="edge", error="invalid_request", error_description="The event stream needs a key."`)
	}
	f, err := EventFilter(c)
	if err != nil {
		return err
	}
	since, has := changes.Pos{}, false
	raw := c.Get("Last-Event-ID")
	if raw == "" {
		raw = c.Query("since")
	}
	if raw != "" {
		if since, err = sinceEvent(raw); err != nil {
			return problem.New(http.StatusBadRequest, "Last-Event-ID (or since): send the id of the last event received unchanged, a time (RFC 3339) or a date (yyyy-MM-dd); omit it to start with the next event.")
		}
		has = true
	}
	write, why := s.stream.Open(key, f, since, has, c.Context().Conn())
	switch why {
	case stream.NotReady:
		return problem.New(http.StatusServiceUnavailable, "The listings' change log is still loading after a restart. Retry in a minute.").RetryAfter(30)
	case stream.KeyFull:
		return problem.Newf(http.StatusTooManyRequests, "This key has %d event streams open, its most on one edge: close one, or filter one stream by store and kind instead of opening several.", s.stream.Config().PerKey).RetryAfter(60)
	case stream.EdgeFull:
		return problem.New(http.StatusServiceUnavailable, "This edge has all the event streams it serves open. Retry in a few seconds (another edge of the service may have room).").RetryAfter(5)
	}
	h := &c.Response().Header
	h.SetContentType("text/event-stream; charset=utf-8")
	h.Set(fiber.HeaderCacheControl, "no-store")
	h.Set("X-Accel-Buffering", "no") // proxies that buffer answers send these as they come
	c.Context().SetBodyStreamWriter(write)
	return nil
}
