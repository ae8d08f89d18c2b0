package v1

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/eventfilter"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
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

// changeLog returns the published state and its change log, or a 503
// while the log loads.
func (s *API) changeLog(st *served.State) (*changes.Log, document.EventWindow, error) {
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

// ListingChangesParams are a listing's changelog query as read: the
// listing, the change log and the window it covers, the page size,
// where the page ends (before: a zero place for the newest) and the
// cursor as sent (a page writes its links from it).
type ListingChangesParams struct {
	Listing *views.Listing
	Log     *changes.Log
	Window  document.EventWindow
	Limit   int
	Before  changes.Pos
	Cursor  string
	// Form says the codec is a page's: its cursor as sent is in its key.
	Form bool
}

// ListingChanges is a page of a listing's changelog and the replica its
// listings are looked up in (a page and a feed link them).
type ListingChanges struct {
	Doc     document.ListingChanges
	Replica *replica.Replica
	Cursor  string
}

// ListingChangesRead is the read of a listing's changelog (GET
// /api/v1/listings/{store}/{id}/changes and .csv, the changes' page and
// its feed): newest first, cursor-paged. A listing delisted before its
// first reading has a changelog too: only an unknown listing is a 404.
// Each call declares it anew: a page's route changes its own.
func (s *API) ListingChangesRead() *read.Read[ListingChangesParams, ListingChanges] {
	return &read.Read[ListingChangesParams, ListingChanges]{
		Cheap:    true,
		Route:    "/api/v1/listings/:store/:id/changes",
		NotReady: "Listing figures are",
		Page:     answer.ParentPage,
		Parse:    s.parseListingChanges,
		Key: func(k answer.Key, p *ListingChangesParams) answer.Key {
			k = k.Int("s", int64(p.Listing.Store)).Str("id", p.Listing.ID).Int("limit", int64(p.Limit)).
				Int("t", p.Before.At).Int("cs", int64(p.Before.Store)).Str("ci", p.Before.ID).Int("ck", int64(p.Before.Kind))
			if p.Form {
				k = k.Str("cursor", p.Cursor)
			}
			return k
		},
		Run: func(_ *fiber.Ctx, st *served.State, p *ListingChangesParams, _ read.Needs) (*ListingChanges, error) {
			l := p.Listing
			cs, more := p.Log.Listing(l.Store, l.ID, p.Before, p.Limit)
			out := &ListingChanges{Replica: st.Replica, Cursor: p.Cursor,
				Doc: document.ListingChanges{Store: l.Store.String(), ID: l.ID, Window: p.Window, Changes: make([]document.Event, len(cs))}}
			for i, ch := range cs {
				out.Doc.Changes[i] = document.NewEvent(ch, st.Replica)
			}
			if more {
				out.Doc.NextCursor = &out.Doc.Changes[len(out.Doc.Changes)-1].EventID
			}
			return out, nil
		},
	}
}

// parseListingChanges reads c's changelog query against st: the listing,
// the change log, limit (default n.Rows for a codec that names its own,
// else eventsDefaultLimit) and cursor, which must be one of this
// listing's changelog.
func (s *API) parseListingChanges(c *fiber.Ctx, st *served.State, n read.Needs) (ListingChangesParams, error) {
	p := ListingChangesParams{Form: n.Form}
	store, err := StoreParam(c)
	if err != nil {
		return p, err
	}
	if p.Listing, err = findListing(st, store, c.Params("id")); err != nil {
		return p, err
	}
	if p.Log, p.Window, err = s.changeLog(st); err != nil {
		return p, err
	}
	def := eventsDefaultLimit
	if n.Rows > 0 {
		def = n.Rows
	}
	if p.Limit, err = limitParam(c, def, eventsMaxLimit); err != nil {
		return p, err
	}
	if raw := c.Query("cursor"); raw != "" {
		pos, ok := document.ParseEventCursor(raw)
		if !ok || pos.Store != p.Listing.Store || pos.ID != p.Listing.ID {
			return p, problem.New(http.StatusBadRequest, "cursor: pass the nextCursor of this listing's previous page unchanged; omit it for the newest changes.").
				ForReaders(staleNext)
		}
		p.Before, p.Cursor = pos, strings.Clone(raw)
	}
	return p, nil
}

// listingChangesJSON writes a page of a listing's changelog as JSON.
var listingChangesJSON = read.Codec[ListingChanges]{Name: "json", Type: fiber.MIMEApplicationJSON,
	Encode: func(_ *fiber.Ctx, v *ListingChanges) (*answer.Answer, error) { return answer.JSON(&v.Doc) }}

// ListingChangesFiles returns the codecs that write a page of a
// listing's changelog as files: CSV, one change a row (eventsCSV's
// columns), and NDJSON, one change's document a line, each the JSON
// page's changes (limit, at most eventsMaxLimit) in its order; the last
// row's event_id is the cursor of the page after.
func ListingChangesFiles() []read.Codec[ListingChanges] {
	return []read.Codec[ListingChanges]{listingChangesCSV,
		{Name: "ndjson", Type: NDJSONContentType, Encode: func(_ *fiber.Ctx, v *ListingChanges) (*answer.Answer, error) {
			return ndjsonFile("changes.ndjson", v.Doc.Changes)
		}}}
}

// listingChangesCSV writes a page of a listing's changelog as CSV (and
// is the one codec of its .csv address).
var listingChangesCSV = read.Codec[ListingChanges]{Name: "csv", Type: "text/csv",
	Encode: func(_ *fiber.Ctx, v *ListingChanges) (*answer.Answer, error) {
		return eventsCSV("changes.csv", v.Doc.Changes)
	}}

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

// EventsParams are an event feed query as read: its filters, whether it
// reads forward from since (oldest first) or back from cursor (newest
// first), the place, the page size, the change log and its window, and
// for a page (read.Needs.Form) its filters as its form and links write
// them and its cursor as read.
type EventsParams struct {
	Filter  changes.Filter
	Forward bool
	Pos     changes.Pos
	Since   string
	Limit   int
	Log     *changes.Log
	Window  document.EventWindow
	Form    url.Values
	Cursor  string
}

// Events is a page of the event feed, the replica its listings are
// looked up in, and the query it answers (a page writes its links from
// it).
type Events struct {
	Doc     document.EventPage
	Replica *replica.Replica
	Params  *EventsParams
}

// EventsRead is the read of the event feed (GET /api/v1/events and
// .csv, the events' page and feed): without since, newest first, paged
// back with cursor; with since, oldest first from there, and nextCursor
// only moves forward (it stays at since when nothing is newer: ask again
// later). Each call declares it anew: a page's route changes its own.
func (s *API) EventsRead() *read.Read[EventsParams, Events] {
	return &read.Read[EventsParams, Events]{
		Cheap:    true,
		Route:    "/api/v1/events",
		NotReady: "Listing figures are",
		Page:     answer.SamePage,
		Parse:    s.parseEvents,
		Key: func(k answer.Key, p *EventsParams) answer.Key {
			k = answer.Flag(k, "fwd", p.Forward).Int("t", p.Pos.At).Int("ps", int64(p.Pos.Store)).Str("pi", p.Pos.ID).Int("pk", int64(p.Pos.Kind)).
				Int("limit", int64(p.Limit)).Str("perm", p.Filter.Permission)
			if p.Forward {
				k = k.Str("since", p.Since) // an empty page's nextCursor is since as sent
			}
			for _, st := range p.Filter.Stores {
				k = k.Int("s", int64(st))
			}
			for _, kd := range p.Filter.Kinds {
				k = k.Int("k", int64(kd))
			}
			if p.Form != nil {
				k = k.Str("q", p.Form.Encode())
			}
			return k
		},
		Run: func(_ *fiber.Ctx, st *served.State, p *EventsParams, _ read.Needs) (*Events, error) {
			return &Events{Doc: document.NewEventPage(st.Replica, p.Log, p.Window, p.Filter, p.Forward, p.Pos, p.Since, p.Limit),
				Replica: st.Replica, Params: p}, nil
		},
	}
}

// parseEvents reads c's event feed query against st: the change log,
// the filters, limit, and since or cursor. A page's query (n.Form) is its
// filters and cursor, n.Rows events a page: its form has no limit, and
// it pages back only.
func (s *API) parseEvents(c *fiber.Ctx, st *served.State, n read.Needs) (EventsParams, error) {
	var p EventsParams
	var err error
	if p.Log, p.Window, err = s.changeLog(st); err != nil {
		return p, err
	}
	if p.Filter, err = EventFilter(c); err != nil {
		return p, err
	}
	// A filter is a set: every spelling of one keys one answer.
	p.Filter.Stores = slices.Compact(slices.Sorted(slices.Values(p.Filter.Stores)))
	p.Filter.Kinds = slices.Compact(slices.Sorted(slices.Values(p.Filter.Kinds)))
	since, cursor := c.Query("since"), c.Query("cursor")
	if n.Form {
		p.Limit, p.Form, since = n.Rows, EventForm(c), ""
	} else if p.Limit, err = limitParam(c, eventsDefaultLimit, eventsMaxLimit); err != nil {
		return p, err
	}
	p.Forward = since != ""
	switch {
	case p.Forward && cursor != "":
		return p, problem.New(http.StatusBadRequest, "since and cursor: send one. since reads forward from a place, oldest first; cursor pages back through the newest first.")
	case p.Forward:
		if p.Pos, err = sinceEvent(since); err != nil {
			return p, err
		}
		p.Since = strings.Clone(since)
	case cursor != "":
		pos, ok := document.ParseEventCursor(cursor)
		if !ok {
			return p, BadCursor()
		}
		p.Pos, p.Cursor = pos, document.EventCursor(pos) // as read: one key for every spelling of one place
	}
	return p, nil
}

// EventForm is the query of the feed's filters as read, canonical: store
// and kind with their values trimmed, sorted and each once, blanks left
// out (the filter is the same in any order), and permission. The events'
// page and feed are keyed by it and write their links from it.
func EventForm(c *fiber.Ctx) url.Values {
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
			q.Set(k, strings.Clone(v))
		}
	}
	return q
}

// eventsJSON writes a page of the event feed as JSON.
var eventsJSON = read.Codec[Events]{Name: "json", Type: fiber.MIMEApplicationJSON,
	Encode: func(_ *fiber.Ctx, v *Events) (*answer.Answer, error) { return answer.JSON(&v.Doc) }}

// EventsFiles returns the codecs that write a page of the event feed as
// files: CSV, one event a row (eventsCSV's columns), and NDJSON, one
// event's document a line, each the JSON page's events (limit, at most
// eventsMaxLimit) in its order; the last row's event_id goes on (as
// cursor newest first, as since oldest first).
func EventsFiles() []read.Codec[Events] {
	return []read.Codec[Events]{eventsCSVCodec,
		{Name: "ndjson", Type: NDJSONContentType, Encode: func(_ *fiber.Ctx, v *Events) (*answer.Answer, error) {
			return ndjsonFile("events.ndjson", v.Doc.Events)
		}}}
}

// eventsCSVCodec writes a page of the event feed as CSV (and is the one
// codec of /api/v1/events.csv).
var eventsCSVCodec = read.Codec[Events]{Name: "csv", Type: "text/csv",
	Encode: func(_ *fiber.Ctx, v *Events) (*answer.Answer, error) { return eventsCSV("events.csv", v.Doc.Events) }}

// eventsCSV is a page of events as the CSV file name: one change a row;
// added and removed names separated by spaces.
func eventsCSV(name string, es []document.Event) (*answer.Answer, error) {
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
	return csvFile(name, []string{"at", "store", "id", "name", "kind", "before", "after", "added", "removed", "widened", "event_id"}, rows)
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

// NotRead is the 404 of a listing found but not read yet, which has no
// page (nor a page's feed) until its first crawl; nil for one read.
func NotRead(l *views.Listing) error {
	if l.Crawled() {
		return nil
	}
	return problem.Newf(http.StatusNotFound, "Listing %q in store %s has been found but not read yet; retry after its first crawl.", l.ID, l.Store).
		ForReaders(fmt.Sprintf("The listing %q of the %s store has been found but not read yet: its page shows once it is.", l.ID, l.Store))
}
