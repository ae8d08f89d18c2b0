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
}

// Lookup finds a listing of the published state by store and id (a
// replica does).
type Lookup interface {
	Lookup(views.Store, string) *views.Listing
}

// NewEvent returns c as it is published, with the listing's name from r.
func NewEvent(c *changes.Change, r Lookup) Event {
	d := Event{EventID: EventCursor(changes.PosOf(c)), At: time.Unix(c.At, 0).UTC(), Store: c.Store.String(), ID: c.ID, Kind: c.Kind.String()}
	if l := r.Lookup(c.Store, c.ID); l != nil && l.Name != "" {
		d.Name = &l.Name
	}
	switch c.Kind {
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
}

// EventCursor returns the eventId of the event at p.
func EventCursor(p changes.Pos) string {
	return *EncodeCursor(eventCursor{Version: 1, At: p.At, Store: uint8(p.Store), ID: []byte(p.ID), Kind: uint8(p.Kind)})
}

// ParseEventCursor reads an eventId EventCursor made; ok is false for
// anything else.
func ParseEventCursor(raw string) (changes.Pos, bool) {
	c, ok := DecodeCursor[eventCursor](raw)
	if !ok || c.Version != 1 || c.Store >= uint8(views.NumStores) || c.Kind == 0 || changes.Kind(c.Kind).String() == "" || len(c.ID) > 512 {
		return changes.Pos{}, false
	}
	return changes.Pos{At: c.At, Store: views.Store(c.Store), ID: string(c.ID), Kind: changes.Kind(c.Kind)}, true
}
