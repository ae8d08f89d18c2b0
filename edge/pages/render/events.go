package render

import (
	"time"
)

// Event is one change of a listing as a page and a feed give it.
type Event struct {
	ID    string // the event's eventId
	At    time.Time
	Store string
	Name  string // the listing's name (its id when it has none)
	URL   string // the listing's page
	// Changes is the page of the listing's changes, which shows this one
	// ("" when the listing has no page).
	Changes string
	Kind    string // the kind's name in the API
	Label   string // the kind in words
	What    string // the change in words
	Warn    bool   // a takeover: shown as a warning
}

// EventsPage is what the event feed's page shows.
type EventsPage struct {
	Title, Intro  string
	Stores, Kinds []Option // the filters
	Permission    string
	Events        []Event
	Older         string // the next page's address, "" at the end
	Newest        string // the first page's address, "" on the first page
	JSONURL       string
	AtomURL       string
	FormAction    string // "" for no filter form (a listing's changes)
	Listing       string // a listing's changes: its page
}

// RenderEvents returns a page of events.
func RenderEvents(d EventsPage) ([]byte, error) {
	return execute(eventsPage, struct {
		EventsPage
		Head Head
	}{d, Head{Title: d.Title, Description: d.Intro,
		Alternates: append([]Alternate{{"application/json", d.JSONURL, "the events as JSON"}, {"application/atom+xml", d.AtomURL, "their Atom feed"}}, Files(d.JSONURL, "this page's events")...)}})
}

var eventsPage = parse("events", nil)
