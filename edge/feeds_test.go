package edge_test

import (
	"html"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/mmcdole/gofeed"

	"github.com/edge-stats/edge/edge"
)

// TestEventPagesAndFeeds: the events' page shows the feed's events, with
// its filters, in its order, and pages back through them; the Atom feeds
// (every change with the feed's filters, a listing's changes) parse with
// a feed reader's parser, hold the same events newest first, each entry
// linking its listing's page, and revalidate with 304.
func TestEventPagesAndFeeds(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"", "?store=chrome", "?kind=version", "?store=edge&kind=permissions"} {
		doc := getOK[eventPageJSON](t, h.Base+"/api/v1/events"+q+func() string {
			if q == "" {
				return "?limit=100"
			}
			return "&limit=100"
		}())
		r := get(t, "GET", h.Base+"/events"+q)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("/events%s: %d", q, r.status)
		}
		var ids []string
		for _, m := range regexp.MustCompile(`data-event="([^"]+)"`).FindAllStringSubmatch(string(r.body), -1) {
			ids = append(ids, html.UnescapeString(m[1]))
		}
		if len(ids) != len(doc.Events) {
			t.Fatalf("/events%s: %d events, the JSON %d", q, len(ids), len(doc.Events))
		}
		for i, e := range doc.Events {
			if ids[i] != e.EventID {
				t.Fatalf("/events%s: event %d is %s, the JSON's %s", q, i, ids[i], e.EventID)
			}
		}
		if doc.NextCursor != nil && !strings.Contains(html.UnescapeString(string(r.body)), "cursor="+url.QueryEscape(*doc.NextCursor)) {
			t.Errorf("/events%s does not page on to %s", q, *doc.NextCursor)
		}

		feed := get(t, "GET", h.Base+"/events.atom"+q)
		if feed.status != 200 || !strings.HasPrefix(feed.header.Get("Content-Type"), "application/atom+xml") || feed.header.Get("ETag") == "" {
			t.Fatalf("/events.atom%s: %d %v", q, feed.status, feed.header)
		}
		parsed, err := gofeed.NewParser().ParseString(string(feed.body))
		if err != nil {
			t.Fatalf("/events.atom%s does not parse: %v", q, err)
		}
		if parsed.FeedType != "atom" || len(parsed.Items) != min(50, len(doc.Events)) {
			t.Fatalf("/events.atom%s: a %s feed of %d items, want %d", q, parsed.FeedType, len(parsed.Items), min(50, len(doc.Events)))
		}
		for i, it := range parsed.Items {
			e := doc.Events[i]
			if it.GUID != "tag:edge,2026:event:"+e.EventID || !strings.HasSuffix(it.Link, "/listings/"+e.Store+"/"+url.PathEscape(e.ID)) ||
				it.UpdatedParsed == nil || !it.UpdatedParsed.Equal(e.At) {
				t.Fatalf("/events.atom%s item %d: %+v, the event %+v", q, i, it, e)
			}
		}
		if again := fetch(t, "GET", h.Base+"/events.atom"+q, "If-None-Match", feed.header.Get("ETag")); again.status != 304 {
			t.Errorf("/events.atom%s revalidated: %d", q, again.status)
		}
	}
	// A listing's changes.
	doc := getOK[eventPageJSON](t, h.Base+"/api/v1/events?kind=version&limit=1")
	e := doc.Events[0]
	log := getOK[changeLogJSON](t, h.Base+"/api/v1/listings/"+e.Store+"/"+url.PathEscape(e.ID)+"/changes")
	feed := get(t, "GET", h.Base+"/listings/"+e.Store+"/"+url.PathEscape(e.ID)+"/changes.atom")
	parsed, err := gofeed.NewParser().ParseString(string(feed.body))
	if err != nil || len(parsed.Items) != min(50, len(log.Changes)) || parsed.Items[0].GUID != "tag:edge,2026:event:"+log.Changes[0].EventID {
		t.Fatalf("a listing's feed: %d %v %+v", feed.status, err, parsed)
	}
	// The listing's page names its feed.
	if p := get(t, "GET", h.Base+"/listings/"+e.Store+"/"+url.PathEscape(e.ID)); !strings.Contains(html.UnescapeString(string(p.body)), `type="application/atom+xml"`) {
		t.Error("the listing's page does not name its changes' feed")
	}
	if r := get(t, "GET", h.Base+"/events.atom?kind=nope"); r.status != 400 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("a bad filter: %d %s", r.status, r.header.Get("Content-Type"))
	}
}
