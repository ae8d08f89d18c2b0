package render

import (
	"encoding/xml"
	"fmt"
	"time"
)

// Feed is an Atom feed (RFC 4287): events, or weekly editions.
type Feed struct {
	Title, ID string
	Self, Alt string // the feed's own address and its page's
	Entries   []FeedEntry
}

// FeedEntry is an entry of a feed: its id (a tag URI), title, the page it
// links to, when it was updated, a summary and a category ("" for none).
type FeedEntry struct {
	ID, Title, URL, Summary, Category string
	Updated                           time.Time
}

// EventEntry is e as an entry of a feed: it links to the page of its
// listing's changes, which shows it, or to the changes' page for a
// listing not read yet.
func EventEntry(e Event) FeedEntry {
	u := e.Changes
	if u == "" {
		u = "/events?store=" + e.Store
	}
	return FeedEntry{ID: "tag:edge,2026:event:" + e.ID, Title: fmt.Sprintf("%s (%s): %s", e.Name, e.Store, e.Label),
		URL: u, Summary: e.What, Category: e.Kind, Updated: e.At}
}

type atomLink struct {
	Rel  string `xml:"rel,attr"`
	Type string `xml:"type,attr,omitempty"`
	Href string `xml:"href,attr"`
}

type atomEntry struct {
	Title   string    `xml:"title"`
	ID      string    `xml:"id"`
	Updated string    `xml:"updated"`
	Link    atomLink  `xml:"link"`
	Summary string    `xml:"summary"`
	Cat     *atomCat  `xml:"category,omitempty"`
	Author  *atomName `xml:"author,omitempty"`
}

type atomCat struct {
	Term string `xml:"term,attr"`
}

type atomName struct {
	Name string `xml:"name"`
}

type atomFeed struct {
	XMLName xml.Name    `xml:"http://www.w3.org/2005/Atom feed"`
	Title   string      `xml:"title"`
	ID      string      `xml:"id"`
	Updated string      `xml:"updated"`
	Author  atomName    `xml:"author"`
	Links   []atomLink  `xml:"link"`
	Entries []atomEntry `xml:"entry"`
}

// RenderFeed returns f as an Atom document, its entries newest first,
// each linking to its page under base; updated is the newest entry's time
// (or epoch when there is none), so that the feed is the same bytes until
// an entry comes.
func RenderFeed(f Feed, base string) ([]byte, error) {
	updated := time.Unix(0, 0).UTC()
	if len(f.Entries) > 0 {
		updated = f.Entries[0].Updated
	}
	out := atomFeed{Title: f.Title, ID: f.ID, Updated: updated.UTC().Format(time.RFC3339), Author: atomName{"edge"},
		Links: []atomLink{{Rel: "self", Type: "application/atom+xml", Href: base + f.Self}, {Rel: "alternate", Type: "text/html", Href: base + f.Alt}}}
	for _, e := range f.Entries {
		a := atomEntry{Title: e.Title, ID: e.ID, Updated: e.Updated.UTC().Format(time.RFC3339),
			Link: atomLink{Rel: "alternate", Type: "text/html", Href: base + e.URL}, Summary: e.Summary}
		if e.Category != "" {
			a.Cat = &atomCat{e.Category}
		}
		out.Entries = append(out.Entries, a)
	}
	b, err := xml.MarshalIndent(out, "", " ")
	if err != nil {
		return nil, fmt.Errorf("render the feed %s: %w", f.Self, err)
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}
