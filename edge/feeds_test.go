package edge_test

import (
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/mmcdole/gofeed"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/pages/render"
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
		r := get(t, "GET", h.Base+"/events"+q)
		// The page names its twin: the same events (50 a page).
		twin := regexp.MustCompile(`<link rel="alternate" type="application/json" href="([^"]+)"`).FindStringSubmatch(string(r.body))
		if twin == nil || !strings.Contains(twin[1], "limit=50") {
			t.Fatalf("/events%s names no JSON twin of its 50 events: %v", q, twin)
		}
		doc := getOK[eventPageJSON](t, h.Base+html.UnescapeString(twin[1]))
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
			// An entry links the page of its listing's changes, which shows
			// it, or the changes' page for a listing never read (which has
			// no page).
			if it.GUID != "tag:edge,2026:event:"+e.EventID ||
				(!strings.HasSuffix(it.Link, "/listings/"+e.Store+"/"+url.PathEscape(e.ID)+"/changes") && !strings.HasSuffix(it.Link, "/events?store="+e.Store)) ||
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
	// The page of the listing's changes shows each of them, as the feed
	// entries that link to it promise.
	page := string(get(t, "GET", h.Base+"/listings/"+e.Store+"/"+url.PathEscape(e.ID)+"/changes").body)
	for _, c := range log.Changes[:min(50, len(log.Changes))] {
		if !strings.Contains(page, `data-event="`+c.EventID+`"`) {
			t.Fatalf("the page of the listing's changes lacks %s (%s)", c.EventID, c.Kind)
		}
	}
	// The listing's page names its feed.
	if p := get(t, "GET", h.Base+"/listings/"+e.Store+"/"+url.PathEscape(e.ID)); !strings.Contains(html.UnescapeString(string(p.body)), `type="application/atom+xml"`) {
		t.Error("the listing's page does not name its changes' feed")
	}
	if r := get(t, "GET", h.Base+"/events.atom?kind=nope"); r.status != 400 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("a bad filter: %d %s", r.status, r.header.Get("Content-Type"))
	}
}

// TestWeekPagesAndFeed: the editions' page lists every edition of the
// JSON list, each edition's page gives the figures of its JSON twin, and
// the editions' Atom feed parses with an entry an edition.
func TestWeekPagesAndFeed(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	if r := get(t, "GET", h.Base+"/weeks"); r.status != 503 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("/weeks before any edition: %d %s", r.status, r.header.Get("Content-Type"))
	}
	if err := h.Jobs.RunNow("editions"); err != nil {
		t.Fatal(err)
	}
	weeks := getOK[struct{ Weeks []struct{ Week string } }](t, h.Base+"/api/v1/weeks")
	list := get(t, "GET", h.Base+"/weeks")
	for _, w := range weeks.Weeks {
		if !strings.Contains(string(list.body), `href="/week/`+w.Week+`"`) {
			t.Errorf("/weeks does not link %s", w.Week)
		}
	}
	figure := regexp.MustCompile(`data-figure="([^"]+)" data-value="([^"]*)"`)
	for _, w := range weeks.Weeks {
		var e map[string]any
		if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1/week/"+w.Week).body, &e); err != nil {
			t.Fatal(err)
		}
		p := get(t, "GET", h.Base+"/week/"+w.Week)
		n := 0
		for _, m := range figure.FindAllStringSubmatch(string(p.body), -1) {
			path := strings.Split(m[1], ".") // store, part, field
			store := e["stores"].(map[string]any)[path[0]].(map[string]any)
			var v any
			if path[1] == "totals" {
				v = store["totals"].(map[string]any)[path[2]]
			} else {
				continue // the lists: checked by their order below
			}
			n++
			if jsonRaw(v) != m[2] {
				t.Errorf("/week/%s: %s is %s, the JSON's %s", w.Week, m[1], m[2], jsonRaw(v))
			}
		}
		// Each listing of a week's lists is named with its developer.
		gainers := e["stores"].(map[string]any)["chrome"].(map[string]any)["gainers"].([]any)
		if len(gainers) == 0 {
			t.Fatalf("/api/v1/week/%s: no chrome gainer", w.Week)
		}
		for _, g := range gainers[:1] {
			id := g.(map[string]any)["id"].(string)
			dev := getOK[struct{ Developer string }](t, h.Base+"/api/v1/listings/chrome/"+url.PathEscape(id)).Developer
			if !strings.Contains(html.UnescapeString(string(p.body)), `">`+g.(map[string]any)["name"].(string)+`</a><span class="why">`+dev+`</span>`) {
				t.Errorf("/week/%s: chrome's biggest gainer %s is not shown with its developer %q", w.Week, id, dev)
			}
		}
		// The list of editions sums each one's totals over the stores.
		var sum [3]int64
		for _, st := range e["stores"].(map[string]any) {
			tot := st.(map[string]any)["totals"].(map[string]any)
			for i, k := range []string{"newcomers", "departures", "liveChange"} {
				sum[i] += int64(tot[k].(float64))
			}
		}
		row := `<a href="/week/` + w.Week + `">` + w.Week + `</a>`
		listed := html.UnescapeString(string(list.body))
		at := strings.Index(listed, row)
		want := fmt.Sprintf("<td>%s</td><td>%s</td><td>%s</td>", render.Int(sum[0]), render.Int(sum[1]), render.Signed(sum[2]))
		if at < 0 || !strings.Contains(listed[at:min(len(listed), at+300)], want) {
			t.Errorf("/weeks: %s's row lacks its totals over the stores %s", w.Week, want)
		}
		if n != 25 {
			t.Errorf("/week/%s shows %d totals, want 5 a store", w.Week, n)
		}
		// Each list's entries, in order.
		for _, s := range []string{"chrome", "apple"} {
			store := e["stores"].(map[string]any)[s].(map[string]any)
			for _, list := range []string{"gainers", "newcomers"} {
				var want []string
				entries, _ := store[list].([]any)
				for _, x := range entries {
					f := "size"
					if list == "gainers" {
						f = "change"
					}
					want = append(want, jsonRaw(x.(map[string]any)[f]))
				}
				var got []string
				for _, m := range figure.FindAllStringSubmatch(string(p.body), -1) {
					if m[1] == s+"."+list+"."+map[string]string{"gainers": "change", "newcomers": "size"}[list] {
						got = append(got, m[2])
					}
				}
				if !slices.Equal(got, want) { // the page shows each list whole, as the JSON has it
					t.Errorf("/week/%s %s %s: %v, the JSON's %v", w.Week, s, list, got, want)
				}
			}
		}
	}
	feed := get(t, "GET", h.Base+"/weeks.atom")
	parsed, err := gofeed.NewParser().ParseString(string(feed.body))
	if err != nil || len(parsed.Items) != len(weeks.Weeks) || !strings.HasSuffix(parsed.Items[0].Link, "/week/"+weeks.Weeks[0].Week) {
		t.Fatalf("/weeks.atom: %d %v %+v", feed.status, err, parsed)
	}
}
