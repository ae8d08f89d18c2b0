package edge_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/edge/limits"
	"github.com/edge-stats/edge/views"
)

// TestPagesForPeople: pages are answered under bounds that fit browsers,
// not the API's anonymous limits (the fourth review: a page counted
// against 30 a minute and was refused as JSON); a refused or missing page
// is an HTML page that says when to come back; every page carries its
// Content-Security-Policy, nosniff and frame-ancestors. Addresses are
// simulated through a trusted proxy's X-Forwarded-For.
func TestPagesForPeople(t *testing.T) {
	h := start(t, seeded(t), withLimits(limits.Policy{PerMinute: 3, PerDay: 1000}, limits.DefaultConfig().Keyed), func(c *edge.Config) {
		c.TrustedProxies = clientip.Prefixes{netip.MustParsePrefix("127.0.0.1/32"), netip.MustParsePrefix("::1/128")}
		c.PageRate, c.PageBurst = 0.01, 8
	})
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	l := firstLive(t, h, views.Chrome)
	listing := h.Base + "/listings/chrome/" + l.ID
	from := func(addr string) []string { return []string{"X-Forwarded-For", addr} }

	// Eight pages from one address: more than the API's 3 a minute, all
	// answered, each with its headers.
	for i := range 8 {
		url := listing
		if i%2 == 1 {
			url = h.Base + "/definitions"
		}
		r := fetch(t, "GET", url, from("198.51.100.7")...)
		if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			t.Fatalf("page %d from one address: %d %s", i+1, r.status, r.header.Get("Content-Type"))
		}
		csp := r.header.Get("Content-Security-Policy")
		if !strings.Contains(csp, "frame-ancestors 'none'") || !strings.Contains(csp, "default-src 'none'") ||
			r.header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("page %d: CSP %q, nosniff %q", i+1, csp, r.header.Get("X-Content-Type-Options"))
		}
	}
	// The ninth is refused as a page saying when to come back.
	r := fetch(t, "GET", listing, from("198.51.100.7")...)
	secs, _ := strconv.Atoi(r.header.Get("Retry-After"))
	if r.status != 429 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || secs < 1 ||
		!strings.Contains(string(r.decoded), "come back in "+r.header.Get("Retry-After")+" seconds") || r.header.Get("Cache-Control") != "no-store" ||
		r.header.Get("Content-Security-Policy") == "" {
		t.Fatalf("past the bound: %d %v %s", r.status, r.header, r.decoded)
	}
	readerErrorPage(t, "past the bound", answer{r.status, r.header, r.decoded}, 429, "slow down")
	// Another address (in another /64 for IPv6) is not held back by it.
	for _, addr := range []string{"198.51.100.8", "2001:db8:1::1"} {
		if r := fetch(t, "GET", listing, from(addr)...); r.status != 200 {
			t.Errorf("a page from %s: %d", addr, r.status)
		}
	}
	// The API's anonymous limit still holds for the API.
	codes := []int{}
	for range 4 {
		codes = append(codes, fetch(t, "GET", h.Base+"/api/v1/charts/chrome", from("198.51.100.9")...).status)
	}
	if codes[3] != 429 {
		t.Errorf("the API's anonymous limit: %v", codes)
	}
	// A page that does not exist is a page too.
	for _, url := range []string{h.Base + "/listings/chrome/nosuchlistingnosuchlistingnosuch", h.Base + "/listings/nostore/x"} {
		r := fetch(t, "GET", url, from("198.51.100.10")...)
		if (r.status != 404 && r.status != 400) || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || !strings.Contains(string(r.decoded), `<main id="main">`) {
			t.Errorf("%s: %d %s %.200s", url, r.status, r.header.Get("Content-Type"), r.decoded)
		}
	}
	// An error page keeps the search form: a search too short to run
	// answers 400 with the form to search again.
	short := fetch(t, "GET", h.Base+"/listings?q=a", from("198.51.100.11")...)
	if short.status != 400 || !strings.Contains(string(short.decoded), `<form method="get" action="/listings" role="search">`) {
		t.Errorf("a one-letter search: %d without the search form: %.300s", short.status, short.decoded)
	}
}

// TestChartPagesEqualTheirJSON: every chart's page (each store, each
// chart, a category) shows the entries of its JSON twin, each figure
// equal, in the same order, with the chart's note, and its links answer.
func TestChartPagesEqualTheirJSON(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 }) // a crawl from one address
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	figure := regexp.MustCompile(`data-figure="([^"]+)" data-value="([^"]*)"`)
	for _, s := range views.Stores {
		for _, chart := range []string{"top", "trending", "rising", "new", "top-rated", "climbers"} {
			q := "?chart=" + chart
			var doc map[string]any
			if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1/charts/"+s.String()+q).body, &doc); err != nil {
				t.Fatal(err)
			}
			r := get(t, "GET", h.Base+"/charts/"+s.String()+q)
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") || r.header.Get("ETag") == "" {
				t.Fatalf("%s %s: %d %v", s, chart, r.status, r.header)
			}
			var want []string
			entries, _ := doc["entries"].([]any)
			for _, e := range entries {
				e := e.(map[string]any)
				l := e["listing"].(map[string]any)
				for _, k := range chartFields[chart] {
					var v any
					if rest, ok := strings.CutPrefix(k, "listing."); ok {
						v = l[rest]
					} else {
						v = e[k]
					}
					want = append(want, k+"="+jsonRaw(v))
				}
			}
			var got []string
			for _, m := range figure.FindAllStringSubmatch(string(r.body), -1) {
				got = append(got, m[1]+"="+html.UnescapeString(m[2]))
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s %s: the page's figures %.300v, the JSON's %.300v", s, chart, got, want)
			}
			// The page says the note in a reader's words: the rule reworded,
			// the counts (why a chart is short or empty) as they are.
			note, _ := doc["note"].(string)
			i := max(strings.LastIndex(note, " It has "), strings.LastIndex(note, " It is empty"))
			if i < 0 { // a full chart: its rule alone, reworded
				if !regexp.MustCompile(`<p class="note">[^<]+</p>`).Match(r.body) {
					t.Errorf("%s %s: the page has no note", s, chart)
				}
				continue
			}
			note = note[i+1:]
			if !strings.Contains(html.UnescapeString(string(r.body)), note) {
				t.Errorf("%s %s: the page lacks the note's %q", s, chart, note)
			}
			shown := html.UnescapeString(regexp.MustCompile(`<[^>]*>`).ReplaceAllString(string(r.body), ""))
			if n := strings.Count(shown, note); len(entries) == 0 && n != 1 {
				t.Errorf("%s %s: an empty chart says its note %d times", s, chart, n)
			}
		}
	}
	// A category's chart, and a category the store lacks.
	cats := getOK[struct{ Categories []struct{ Name string } }](t, h.Base+"/api/v1/categories/chrome").Categories
	if r := get(t, "GET", h.Base+"/charts/chrome?chart=top&category="+url.QueryEscape(cats[0].Name)); r.status != 200 ||
		!strings.Contains(string(r.body), "<h1>Largest: "+html.EscapeString(cats[0].Name)+" in chrome</h1>") {
		t.Errorf("a category's chart: %d %.300s", r.status, r.body)
	}
	if r := get(t, "GET", h.Base+"/charts/chrome?category=nosuchcategory"); r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("a category the store lacks: %d %s", r.status, r.header.Get("Content-Type"))
	}
}

// chartFields are the JSON fields of a chart's entries its page shows,
// in its columns' order.
var chartFields = map[string][]string{
	"top": {"listing.size"}, "new": {"listing.size"}, "trending": {"change", "percent", "listing.size"}, "rising": {"percent", "change", "listing.size"},
	"top-rated": {"listing.rating", "listing.ratingCount"}, "climbers": {"climb", "listing.storeRank"},
}

// jsonRaw is a JSON value as a page's data-value gives it.
func jsonRaw(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return v
	}
	return fmt.Sprint(v)
}

// TestHomeAndStorePages: the home page (for a browser) and each store's
// page show the figures of their JSON twins, and every link of them
// answers; a program still gets the API's home as JSON.
func TestHomeAndStorePages(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	for _, job := range []string{"views", "editions"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	browser := map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
	home := call(t, "GET", h.Base+"/", browser, "")
	if home.status != 200 || !strings.Contains(string(home.body), "<h1>Extensions and apps of five stores</h1>") || !strings.Contains(home.header.Get("Vary"), "Accept") {
		t.Fatalf("/ for a browser: %d %v %.300s", home.status, home.header, home.body)
	}
	if j := call(t, "GET", h.Base+"/", nil, ""); j.status != 200 || !strings.HasPrefix(j.header.Get("Content-Type"), "application/json") {
		t.Fatalf("/ for a program: %d %v", j.status, j.header)
	}
	// Crawlers may read the pages, not the API; the pages are public
	// answers a CDN may keep.
	if r := get(t, "GET", h.Base+"/robots.txt"); r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(string(r.body), "User-agent: *\nDisallow: /api/\n") || strings.Contains(string(r.body), "Disallow: /\n") ||
		strings.Contains(string(r.body), "Disallow: /listings") {
		t.Errorf("/robots.txt: %d %s %q", r.status, r.header.Get("Content-Type"), r.body)
	}
	if cc, vary := home.header.Get("Cache-Control"), home.header.Get("Vary"); !strings.HasPrefix(cc, "public, max-age=60") || strings.Contains(vary, "Authorization") ||
		home.header.Get("Surrogate-Key") != "edge edge-page page-home" {
		t.Errorf("/ for a browser: Cache-Control %q, Vary %q, Surrogate-Key %q", cc, vary, home.header.Get("Surrogate-Key"))
	}
	figure := regexp.MustCompile(`data-figure="([^"]+)" data-value="([^"]*)"`)
	for _, s := range views.Stores {
		stats := getOK[map[string]any](t, h.Base+"/api/v1/stores/"+s.String()+"/stats")
		r := get(t, "GET", h.Base+"/stores/"+s.String())
		if r.status != 200 {
			t.Fatalf("/stores/%s: %d", s, r.status)
		}
		shown, groups := 0, 0
		for _, m := range figure.FindAllStringSubmatch(string(r.body), -1) {
			// The distributions' bars: a path into the JSON's lists.
			if strings.HasPrefix(m[1], "ratingDistribution.") || strings.HasPrefix(m[1], "sizeBuckets.") {
				groups++
				if want := jsonPath(stats, m[1]); want != html.UnescapeString(m[2]) {
					t.Errorf("/stores/%s: %s is %s, the JSON's %s", s, m[1], m[2], want)
				}
				continue
			}
			if v, ok := stats[m[1]]; ok {
				shown++
				if jsonRaw(v) != html.UnescapeString(m[2]) {
					t.Errorf("/stores/%s: %s is %s, the JSON's %s", s, m[1], m[2], jsonRaw(v))
				}
			}
		}
		if shown < 10 {
			t.Errorf("/stores/%s shows %d of the statistics", s, shown)
		}
		// A count of listings links them.
		for _, want := range []string{`data-figure="live" data-value="` + jsonRaw(stats["live"]) + `"><a href="/listings?store=` + s.String() + `">`,
			`data-figure="delistedThisWeek" data-value="` + jsonRaw(stats["delistedThisWeek"]) + `"><a href="/events?store=` + s.String() + `&amp;kind=delisted">`} {
			if !strings.Contains(string(r.body), want) {
				t.Errorf("/stores/%s lacks %s", s, want)
			}
		}
		// Its trending chart says the window its changes are over.
		tr := getOK[struct{ From, To time.Time }](t, h.Base+"/api/v1/charts/"+s.String()+"?chart=trending")
		if window := "Size change from " + tr.From.UTC().Format("2 Jan") + " to " + tr.To.UTC().Format("2 Jan 2006"); !strings.Contains(string(r.body), window) {
			t.Errorf("/stores/%s: the trending chart does not say %q", s, window)
		}
		if want := len(stats["ratingDistribution"].([]any)) + len(stats["sizeBuckets"].([]any)); groups != want {
			t.Errorf("/stores/%s shows %d groups of its distributions, the JSON has %d", s, groups, want)
		}
		if !strings.Contains(string(home.body), `data-figure="live" data-value="`+jsonRaw(stats["live"])+`"`) {
			t.Errorf("the home page lacks %s's %v live listings", s, stats["live"])
		}
	}
}

// TestCrawlFromHome follows every link of the pages from / as a browser
// would, through 500 pages: none answers 404 or an error of the server,
// and every page type is reached.
func TestCrawlFromHome(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	for _, job := range []string{"views", "editions"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	browser := map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
	href := regexp.MustCompile(`href="(/[^"]*)"`)
	queue, seen, pages := []string{"/"}, map[string]bool{"/": true}, 0
	from := map[string]string{}
	kinds, first := map[string]bool{}, map[string]bool{}
	// kindOf is the kind of page u is: its first segment, or a listing's
	// own pages (its changes, its reviews).
	kindOf := func(u string) string {
		path, _, _ := strings.Cut(u, "?")
		if strings.HasPrefix(path, "/listings/") && strings.Count(path, "/") == 4 {
			return "listing " + path[strings.LastIndex(path, "/")+1:]
		}
		return strings.SplitN(strings.TrimPrefix(path, "/"), "/", 2)[0]
	}
	// Every link to an anchor (/path#id, or #id on the page itself), and
	// the bodies of the pages read, to check that each anchor is there.
	type anchor struct{ page, id, from string }
	var anchors []anchor
	bodies := map[string][]byte{}
	local := regexp.MustCompile(`href="#([^"]+)"`)
	tags := regexp.MustCompile(`<[^>]*>`)
	for len(queue) > 0 && pages < 500 {
		u := queue[0]
		queue = queue[1:]
		r := call(t, "GET", h.Base+u, browser, "")
		if r.status == 404 || r.status >= 500 {
			t.Errorf("%s (linked from %s) answers %d", u, from[u], r.status)
			continue
		}
		if r.status >= 400 {
			// A page linked to that answers an error (the comparison
			// of no listings) speaks a reader's words too.
			readerErrorPage(t, u, r, r.status, "")
		}
		if !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
			continue // a JSON, CSV or feed twin: asked, not read
		}
		pages++
		bodies[u] = r.body
		// Pages speak a reader's words, not the API's field names (but
		// the definitions, which name them, and the API reference).
		text := tags.ReplaceAll(r.body, nil)
		for _, api := range []string{"dataNow", "growth.7d", "from from", "at to ("} {
			if u != "/docs" && u != "/definitions" && bytes.Contains(text, []byte(api)) {
				t.Errorf("%s says %q, the API's words", u, api)
			}
		}
		// The first link of every page skips its header to the content
		// (but the API reference's, a page of its own renderer).
		if first := bytes.Index(r.body, []byte("<a ")); u != "/docs" && (first < 0 || !bytes.HasPrefix(r.body[first:], []byte(`<a class="skip" href="#main">`))) {
			t.Errorf("%s: the first link is not the skip link to the content", u)
		}
		// Every page, an error's too, has the search box in its header.
		if u != "/docs" && !bytes.Contains(r.body, []byte(`<form class="find" method="get" action="/listings" role="search" aria-label="Site search">`)) {
			t.Errorf("%s has no search box in its header", u)
		}
		kinds[kindOf(u)] = true
		for _, m := range local.FindAllStringSubmatch(string(r.body), -1) {
			anchors = append(anchors, anchor{u, html.UnescapeString(m[1]), u})
		}
		for _, m := range href.FindAllStringSubmatch(string(r.body), -1) {
			v, id, hasID := strings.Cut(html.UnescapeString(m[1]), "#")
			if hasID {
				anchors = append(anchors, anchor{v, id, u})
			}
			if !seen[v] {
				seen[v] = true
				from[v] = u
				if k := kindOf(v); !kinds[k] && !first[k] {
					// A page of a kind not reached yet goes first, so
					// that the 500 pages read reach every kind.
					first[k] = true
					queue = append([]string{v}, queue...)
				} else {
					queue = append(queue, v)
				}
			}
		}
	}
	for _, k := range []string{"", "stores", "charts", "categories", "tags", "listings", "events", "weeks", "week", "definitions", "compare",
		"listing changes", "listing reviews"} {
		if !kinds[k] {
			t.Errorf("no /%s page was reached (reached %v)", k, kinds)
		}
	}
	if pages < 200 {
		t.Errorf("only %d pages reached", pages)
	}
	// Every anchor linked to is on its page.
	dead := map[string]bool{}
	for _, a := range anchors {
		body, ok := bodies[a.page]
		if !ok {
			body = call(t, "GET", h.Base+a.page, browser, "").body
			bodies[a.page] = body
		}
		target := a.page + "#" + a.id
		if !dead[target] && !bytes.Contains(body, []byte(`id="`+html.EscapeString(a.id)+`"`)) {
			dead[target] = true
			t.Errorf("%s links to %s: no element has that id", a.from, target)
		}
	}
	if len(anchors) < 100 {
		t.Errorf("only %d links to anchors found: the crawl reads the pages' figure labels", len(anchors))
	}
	// Every page read is valid HTML (and its style valid CSS).
	validHTML(t, bodies, t.TempDir())
	jsonNamesItsPage(t, h)
}

// pageLink finds the page a Link header names.
var pageLink = regexp.MustCompile(`<([^>]*)>; rel="alternate"; type="text/html"`)

// jsonNamesItsPage: every API answer a person would open names its page
// in its Link header (beside the definitions), and the page answers as
// HTML; the page of a listing's history, growth, reviews and changes is
// the listing's, a store's statistics' the store's.
func jsonNamesItsPage(t *testing.T, h *harness) {
	l := firstLive(t, h, views.Chrome)
	other := h.State.Load().Replica.OfStore(views.Edge)[0]
	slug := getOK[struct{ Tags []struct{ Slug string } }](t, h.Base+"/api/v1/tags").Tags[0].Slug
	week := getOK[struct{ Weeks []struct{ Week string } }](t, h.Base+"/api/v1/weeks").Weeks[0].Week
	listing := "/listings/chrome/" + l.ID
	for api, page := range map[string]string{
		"/api/v1/charts/chrome?chart=rising":                                   "/charts/chrome?chart=rising",
		"/api/v1/categories/chrome":                                            "/categories/chrome",
		"/api/v1/tags":                                                         "/tags",
		"/api/v1/tags/" + slug + "/chrome":                                     "/tags/" + slug + "/chrome",
		"/api/v1/listings?store=chrome&sort=growth7d":                          "/listings?store=chrome&sort=growth7d",
		"/api/v1" + listing:                                                    listing,
		"/api/v1" + listing + "/history":                                       listing,
		"/api/v1" + listing + "/history.csv":                                   listing,
		"/api/v1" + listing + "/growth?from=2026-02-20":                        listing,
		"/api/v1" + listing + "/reviews":                                       listing,
		"/api/v1" + listing + "/changes":                                       listing,
		"/api/v1/events?store=chrome&kind=permissions,name":                    "/events?store=chrome&kind=permissions%2Cname",
		"/api/v1/events.csv?store=chrome":                                      "/events?store=chrome",
		"/api/v1/compare?days=7&listings=chrome:" + l.ID + ",edge:" + other.ID: "/compare?days=7&listings=chrome:" + l.ID + "%2Cedge:" + other.ID,
		"/api/v1/stores/chrome/stats":                                          "/stores/chrome",
		"/api/v1/week":                                                         "/week",
		"/api/v1/weeks":                                                        "/weeks",
		"/api/v1/week/" + week:                                                 "/week/" + week,
		"/api/v1/definitions":                                                  "/definitions",
	} {
		r := get(t, "GET", h.Base+api)
		m := pageLink.FindStringSubmatch(r.header.Get("Link"))
		if r.status != 200 || m == nil || m[1] != page || !strings.Contains(r.header.Get("Link"), `</api/v1/definitions>; rel="describedby"`) {
			t.Errorf("%s: %d, Link %q, want the page %s", api, r.status, r.header.Get("Link"), page)
			continue
		}
		if p := get(t, "GET", h.Base+page); p.status != 200 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") {
			t.Errorf("%s names %s, which answers %d %s", api, page, p.status, p.header.Get("Content-Type"))
		}
	}
	// An answer without a page names none.
	if r := get(t, "GET", h.Base+"/api/v1/exports"); pageLink.MatchString(r.header.Get("Link")) {
		t.Errorf("/api/v1/exports names a page: %q", r.header.Get("Link"))
	}
}

// TestCountPagesEqualTheirJSON: the categories' and topics' pages, and a
// topic's listings in a store, give the counts and sizes of their JSON
// twins, in the same order.
func TestCountPagesEqualTheirJSON(t *testing.T) {
	// 6,000 listings: a topic has more chrome listings than its page shows.
	h := start(t, seededN(t, 6000), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	figure := regexp.MustCompile(`data-figure="([^"]+)" data-value="([^"]*)"`)
	figures := func(path string) []string {
		r := get(t, "GET", h.Base+path)
		if r.status != 200 {
			t.Fatalf("%s: %d", path, r.status)
		}
		var out []string
		for _, m := range figure.FindAllStringSubmatch(string(r.body), -1) {
			out = append(out, m[1]+"="+m[2])
		}
		return out
	}
	cats := getOK[struct{ Categories []map[string]any }](t, h.Base+"/api/v1/categories/chrome")
	var want []string
	for i, c := range cats.Categories {
		for _, f := range []string{"listings", "totalSize", "growth7d", "growth30d"} {
			want = append(want, "categories."+strconv.Itoa(i)+"."+f+"="+jsonRaw(c[f]))
		}
	}
	if got := figures("/categories/chrome"); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("/categories/chrome: %v, the JSON's %v", got, want)
	}
	tags := getOK[struct {
		Tags []struct {
			Slug     string
			Listings map[string]int
		}
	}](t, h.Base+"/api/v1/tags")
	want = nil
	for _, tg := range tags.Tags {
		for _, s := range views.Stores {
			want = append(want, "listings."+s.String()+"="+strconv.Itoa(tg.Listings[s.String()]))
		}
	}
	if got := figures("/tags"); !slices.Equal(got, want) || len(want) == 0 {
		t.Errorf("/tags: %.300v, the JSON's %.300v", got, want)
	}
	slug := tags.Tags[0].Slug // the topic with the most chrome listings: its page shows the first 50
	for _, tg := range tags.Tags {
		if tg.Listings["chrome"] > tags.Tags[0].Listings["chrome"] {
			slug = tg.Slug
		}
	}
	tag := getOK[struct{ Listings []struct{ Size *int64 } }](t, h.Base+"/api/v1/tags/"+slug+"/chrome")
	want = nil
	for _, l := range tag.Listings {
		want = append(want, "size="+jsonRaw(func() any {
			if l.Size == nil {
				return nil
			}
			return float64(*l.Size)
		}()))
	}
	if len(want) <= 50 {
		t.Fatalf("the topic %s has %d chrome listings: too few to test its page's first 50", slug, len(want))
	}
	if got := figures("/tags/" + slug + "/chrome"); !slices.Equal(got, want[:50]) {
		t.Errorf("/tags/%s/chrome: %v, the JSON's first 50 %v", slug, got, want[:50])
	}
	if r := get(t, "GET", h.Base+"/tags/"+slug+"/chrome"); !strings.Contains(string(r.body), `href="/listings?store=chrome&amp;tag=`+slug+`"`) {
		t.Errorf("/tags/%s/chrome does not link every one of its listings in the browser", slug)
	}
	if r := get(t, "GET", h.Base+"/tags/nosuchtopic/chrome"); r.status != 404 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("an unknown topic: %d %s", r.status, r.header.Get("Content-Type"))
	}
}

// TestBrowseAndComparePages: the listings' browser and the comparison
// show their JSON twins' listings and figures, in order, and page on by
// cursor; a bad parameter is an HTML 400 saying what to change.
func TestBrowseAndComparePages(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	figure := regexp.MustCompile(`data-figure="([^"]+)" data-value="([^"]*)"`)
	for _, q := range []string{"", "?store=chrome&sort=growth7d", "?q=pdf", "?store=apple&sort=rating&order=asc&limit=20"} {
		var doc struct {
			Listings []struct {
				Size   *int64
				Rating *float64
			}
			NextCursor *string
		}
		if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1/listings"+q).body, &doc); err != nil {
			t.Fatal(err)
		}
		r := get(t, "GET", h.Base+"/listings"+q)
		if r.status != 200 {
			t.Fatalf("/listings%s: %d %.200s", q, r.status, r.body)
		}
		var sizes, ratings []string
		for _, m := range figure.FindAllStringSubmatch(string(r.body), -1) {
			switch m[1] {
			case "size":
				sizes = append(sizes, m[2])
			case "rating":
				ratings = append(ratings, m[2])
			}
		}
		if len(sizes) != len(doc.Listings) || len(doc.Listings) == 0 {
			t.Fatalf("/listings%s: %d sizes, the JSON's %d listings", q, len(sizes), len(doc.Listings))
		}
		for i, l := range doc.Listings {
			var ws, wr any
			if l.Size != nil {
				ws = float64(*l.Size)
			}
			if l.Rating != nil {
				wr = *l.Rating
			}
			if sizes[i] != jsonRaw(ws) || ratings[i] != jsonRaw(wr) {
				t.Fatalf("/listings%s #%d: %s %s, the JSON's %v %v", q, i+1, sizes[i], ratings[i], ws, wr)
			}
		}
		if doc.NextCursor != nil && !strings.Contains(html.UnescapeString(string(r.body)), "cursor="+url.QueryEscape(*doc.NextCursor)) {
			t.Errorf("/listings%s does not page on", q)
		}
	}
	if r := get(t, "GET", h.Base+"/listings?sort=nope"); r.status != 400 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/html") {
		t.Errorf("a bad sort: %d %s", r.status, r.header.Get("Content-Type"))
	}
	// A comparison of three listings.
	ls := getOK[struct{ Listings []struct{ Store, ID string } }](t, h.Base+"/api/v1/listings?store=chrome&limit=3").Listings
	var refs []string
	for _, l := range ls {
		refs = append(refs, l.Store+":"+l.ID)
	}
	q := "?days=14&listings=" + url.QueryEscape(strings.Join(refs, ","))
	var cmp struct {
		Listings []struct {
			Growth *struct {
				Change  int64
				Percent *float64
			}
		}
	}
	if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1/compare"+q).body, &cmp); err != nil {
		t.Fatal(err)
	}
	r := get(t, "GET", h.Base+"/compare"+q)
	var changes []string
	for _, m := range figure.FindAllStringSubmatch(string(r.body), -1) {
		if m[1] == "growth.change" {
			changes = append(changes, m[2])
		}
	}
	if r.status != 200 || len(changes) != len(cmp.Listings) {
		t.Fatalf("/compare: %d, %d changes for %d listings", r.status, len(changes), len(cmp.Listings))
	}
	for i, l := range cmp.Listings {
		want := ""
		if l.Growth != nil {
			want = strconv.FormatInt(l.Growth.Change, 10)
		}
		if changes[i] != want {
			t.Errorf("/compare #%d: %s, the JSON's %s", i+1, changes[i], want)
		}
	}
}

// TestHomeNegotiatesAccept: / is a page for a request whose Accept weighs
// text/html above JSON by RFC 9110's rules (media ranges, q-values, case),
// not for one that merely holds the substring; so for the API's own home
// (before the figures are built) and for CSV by Accept.
func TestHomeNegotiatesAccept(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	cases := []struct {
		accept string
		page   bool
	}{
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true}, // a browser's
		{"TEXT/HTML", true},
		{"text/*", true},
		{"text/html;q=0, application/json", false},
		{"text/htmlx", false},
		{"*/*", false},
		{"", false},
		{"application/json;q=0.5, text/html;q=0.4", false},
		{"text/html;level=1", false}, // no page of the edge's has that parameter
	}
	ask := func(when string) {
		t.Helper()
		for _, c := range cases {
			r := call(t, "GET", h.Base+"/", map[string]string{"Accept": c.accept}, "")
			isPage := strings.HasPrefix(r.header.Get("Content-Type"), "text/html")
			if r.status != 200 || isPage != c.page || !strings.Contains(r.header.Get("Vary"), "Accept") {
				t.Errorf("%s: / with Accept %q: %d %s (Vary %q), want a page: %v", when, c.accept, r.status,
					r.header.Get("Content-Type"), r.header.Get("Vary"), c.page)
			}
		}
	}
	ask("the API's home, before the figures")
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	ask("the stores' home")
	for _, c := range []struct {
		accept string
		csv    bool
	}{
		{"TEXT/CSV", true},
		{"text/csv, application/json;q=0.5", true},
		{"text/csv;q=0, application/json", false},
		{"text/csvx", false},
		{"text/csv, application/json", false}, // a tie is no preference: JSON, the address's own
	} {
		r := call(t, "GET", h.Base+"/api/v1/events?limit=5", map[string]string{"Accept": c.accept}, "")
		isCSV := strings.HasPrefix(r.header.Get("Content-Type"), "text/csv")
		if r.status != 200 || isCSV != c.csv {
			t.Errorf("/api/v1/events with Accept %q: %d %s, want CSV: %v %.300s", c.accept, r.status, r.header.Get("Content-Type"), c.csv, r.body)
		}
	}
}
