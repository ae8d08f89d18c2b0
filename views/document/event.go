package document

import (
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// Event is one change of one listing, as the changelog, the event feed,
// its stream and the webhooks give it.
type Event struct {
	EventID string    `json:"eventId"` // the event's cursor: resume after it
	At      time.Time `json:"at"`
	Store   string    `json:"store"`
	ID      string    `json:"id"`
	Name    *string   `json:"name"` // the listing's current name; null when it left the replica
	Kind    string    `json:"kind"`
	Before  *string   `json:"before"`
	After   *string   `json:"after"`
	Added   []string  `json:"added"`   // permissions and hostAccess; null for other kinds
	Removed []string  `json:"removed"` // the same
	Widened *bool     `json:"widened"` // hostAccess only; null for other kinds
	// Joins is a takeover's two events: its change of developer and the
	// widening that made it one; absent for other kinds.
	Joins []string `json:"joins,omitempty"`
}

// Lookup finds a listing of the published state by store and id, and
// holds its change log (a replica does).
type Lookup interface {
	Lookup(views.Store, string) *views.Listing
	Changes() *changes.Log
}

// NewEvent returns c as it is published, with the listing's name from r.
func NewEvent(c *changes.Change, r Lookup) Event {
	d := Event{EventID: EventCursor(changes.PosOf(c)), At: time.Unix(c.At, 0).UTC(), Store: c.Store.String(), ID: c.ID, Kind: c.Kind.String()}
	if l := r.Lookup(c.Store, c.ID); l != nil && l.Name != "" {
		d.Name = &l.Name
	}
	switch c.Kind {
	case changes.Takeover:
		d.Before, d.After, d.Added = &c.Before, &c.After, nonNil(c.Added())
		if dev, widening, ok := r.Changes().Joins(c); ok {
			d.Joins = []string{EventCursor(dev), EventCursor(widening)}
		}
	case changes.Permissions, changes.HostAccess:
		d.Added, d.Removed = nonNil(c.Added()), nonNil(c.Removed())
		if c.Kind == changes.HostAccess {
			w := c.Widened
			d.Widened = &w
		}
	default:
		if c.Before != "" {
			d.Before = &c.Before
		}
		if c.After != "" {
			d.After = &c.After
		}
	}
	return d
}

// eventCursor is what an event's cursor carries: its place in the feed.
type eventCursor struct {
	Version int    `json:"v"`
	At      int64  `json:"t"`
	Store   uint8  `json:"s"`
	ID      []byte `json:"i"` // bytes, so that any id reads back as it was (JSON text would replace invalid UTF-8)
	Kind    uint8  `json:"k"`
	// Derived is a derived event's kind (changes.Takeover), whose Kind is
	// then the last kind read (lastRead): see EventCursor.
	Derived uint8 `json:"d,omitempty"`
}

// lastRead is the last kind of change read from the crawls: every kind
// after it is derived by the edge.
const lastRead = changes.Takeover - 1

// EventCursor returns the eventId of the event at p. A takeover's
// carries the place of the last kind read at its crawl and listing, with
// its own kind beside it: an edge of a build before takeovers (in a
// rolling upgrade) reads it as that place, from which its feed goes on
// with the same events as this build's does after the takeover (it has
// no takeover to list), where the takeover's kind itself would be a bad
// cursor to it.
func EventCursor(p changes.Pos) string {
	c := eventCursor{Version: 1, At: p.At, Store: uint8(p.Store), ID: []byte(p.ID), Kind: uint8(p.Kind)}
	if p.Kind > lastRead {
		c.Kind, c.Derived = uint8(lastRead), uint8(p.Kind)
	}
	return *EncodeCursor(c)
}

// ParseEventCursor reads an eventId EventCursor made; ok is false for
// anything else.
func ParseEventCursor(raw string) (changes.Pos, bool) {
	c, ok := DecodeCursor[eventCursor](raw)
	if !ok || c.Version != 1 || c.Store >= uint8(views.NumStores) || c.Kind == 0 || changes.Kind(c.Kind).String() == "" || len(c.ID) > 512 {
		return changes.Pos{}, false
	}
	kind := changes.Kind(c.Kind)
	if c.Derived != 0 {
		if kind != lastRead || changes.Kind(c.Derived) <= lastRead || changes.Kind(c.Derived).String() == "" {
			return changes.Pos{}, false
		}
		kind = changes.Kind(c.Derived)
	}
	return changes.Pos{At: c.At, Store: views.Store(c.Store), ID: string(c.ID), Kind: kind}, true
}

// EventWindow is the span of time the change log covers.
type EventWindow struct {
	From time.Time `json:"from"` // changes before it are not kept (--change-days)
	To   time.Time `json:"to"`   // the newest metadata crawl read
}

// ListingChanges is one listing's changes, as
// /api/v1/listings/{store}/{id}/changes gives them.
type ListingChanges struct {
	Store      string      `json:"store"`
	ID         string      `json:"id"`
	Window     EventWindow `json:"window"`
	Changes    []Event     `json:"changes"`
	NextCursor *string     `json:"nextCursor"`
}

// EventPage is a page of the event feed, as /api/v1/events, the
// events' page and their Atom feed give it.
type EventPage struct {
	Order        string      `json:"order"` // newest (no since) or oldest (from since)
	Window       EventWindow `json:"window"`
	Events       []Event     `json:"events"`
	NextCursor   *string     `json:"nextCursor"`
	LatestCursor *string     `json:"latestCursor"` // the newest event of the feed, filters aside: poll with since=latestCursor
}

// NewEventPage is a page of the event feed: limit events of log that f
// keeps, after pos oldest first (forward, from since as given) or before
// it newest first (a zero pos: the newest).
func NewEventPage(r Lookup, log *changes.Log, window EventWindow, f changes.Filter, forward bool, pos changes.Pos, since string, limit int) EventPage {
	var (
		cs   []*changes.Change
		more bool
	)
	out := EventPage{Order: "newest", Window: window}
	if forward {
		out.Order = "oldest"
		cs, more = log.After(&f, pos, limit)
	} else {
		cs, more = log.Before(&f, pos, limit)
	}
	out.Events = make([]Event, len(cs))
	for i, ch := range cs {
		out.Events[i] = NewEvent(ch, r)
	}
	switch {
	case forward && len(cs) > 0:
		out.NextCursor = &out.Events[len(cs)-1].EventID
	case forward:
		next := since // nothing newer: the same place, as it was given (a cursor, a time or a date)
		out.NextCursor = &next
	case more:
		out.NextCursor = &out.Events[len(cs)-1].EventID
	}
	if log.Len() > 0 {
		latest := EventCursor(log.Newest())
		out.LatestCursor = &latest
	}
	return out
}
