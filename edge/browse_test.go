package edge_test

import (
	"context"
	"encoding/json"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mmcdole/gofeed"

	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
)

// jsonPath returns the value at a dotted path of a JSON document
// ("growth.7d.change", "sizeBuckets.2.listings"), as jsonRaw writes it.
func jsonPath(doc map[string]any, path string) string {
	var v any = doc
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i, err := strconv.Atoi(k)
			if err != nil || i < 0 || i >= len(x) {
				return jsonRaw(nil)
			}
			v = x[i]
		default:
			return jsonRaw(nil)
		}
	}
	return jsonRaw(v)
}

// TestBrowseSortsByAClick: on the listings' browser every column's heading
// is a link that sorts by it, the column sorted by is marked (aria-sort)
// and its link gives the other order, the figure sorted by is always a
// column and equals the JSON's, a cross-store list by size says how it
// orders, and a later page numbers its rows on from the one before.
func TestBrowseSortsByAClick(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	th := regexp.MustCompile(`<th scope="col"[^>]*?(?: aria-sort="(\w+)")?><a href="([^"]+)">([^<]+)</a></th>`)
	figure := regexp.MustCompile(`data-figure="([^"]+)" data-value="([^"]*)"`)
	for _, tc := range []struct {
		q, path, order string
	}{
		{"store=chrome&sort=installs", "size", "descending"},
		{"store=chrome&sort=ratingcount&order=asc", "ratingCount", "ascending"},
		{"store=chrome&sort=growthpct7d", "growth.7d.percent", "descending"},
		{"store=chrome&sort=growth30d", "growth.30d.change", "descending"},
		{"store=chrome&sort=ratinggrowth7d", "ratingGrowth.7d.change", "descending"},
		{"store=chrome&sort=updated", "updated", "descending"},
		{"store=chrome&sort=created", "created", "descending"},
		{"store=chrome&sort=firstseen", "firstSeen", "descending"},
		{"store=chrome&sort=rankclimb", "rankClimb7d", "descending"},
		{"store=firefox&sort=rating", "rating", "descending"},
	} {
		body := html.UnescapeString(string(get(t, "GET", h.Base+"/listings?"+tc.q).body))
		var sorted []string
		links := map[string]string{}
		for _, m := range th.FindAllStringSubmatch(body, -1) {
			u, err := url.Parse(m[2])
			if err != nil || u.Path != "/listings" || u.Query().Get("sort") == "" {
				t.Fatalf("/listings?%s: the heading %q links to %q, not a sort", tc.q, m[3], m[2])
			}
			links[u.Query().Get("sort")] = m[2]
			if m[1] != "" {
				sorted = append(sorted, m[1])
				if want := map[string]string{"ascending": "desc", "descending": "asc"}[m[1]]; u.Query().Get("order") != want {
					t.Errorf("/listings?%s: the sorted column's link %q, want order=%s", tc.q, m[2], want)
				}
			}
		}
		if len(sorted) != 1 || sorted[0] != tc.order {
			t.Errorf("/listings?%s: aria-sort %v, want one %s", tc.q, sorted, tc.order)
		}
		for _, s := range []string{"name", "installs", "growth7d", "rating"} {
			if links[s] == "" {
				t.Errorf("/listings?%s: no heading sorts by %s (%v)", tc.q, s, links)
			}
		}
		var docs struct{ Listings []map[string]any }
		if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1/listings?"+tc.q).body, &docs); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range figure.FindAllStringSubmatch(body, -1) {
			if m[1] == tc.path {
				got = append(got, m[2])
			}
		}
		if len(got) != len(docs.Listings) || len(got) == 0 {
			t.Fatalf("/listings?%s: %d figures %s, the JSON's %d listings", tc.q, len(got), tc.path, len(docs.Listings))
		}
		for i, d := range docs.Listings {
			if want := jsonPath(d, tc.path); got[i] != want {
				t.Errorf("/listings?%s #%d: %s %s, the JSON's %s", tc.q, i+1, tc.path, got[i], want)
			}
		}
	}
	if body := string(get(t, "GET", h.Base+"/listings").body); !strings.Contains(body, "each store&#39;s largest, then each store&#39;s second") {
		t.Error("a list of every store by size does not say how it orders them")
	}
	if body := html.UnescapeString(string(get(t, "GET", h.Base+"/listings?sort=growth7d").body)); !strings.Contains(body, "choose a store to compare like with like") {
		t.Error("a growth of every store does not say the stores count in different units")
	}
	// By rating: how many rated each listing, and the charts that keep
	// ratings of many people.
	byRating := html.UnescapeString(string(get(t, "GET", h.Base+"/listings?store=firefox&sort=rating").body))
	if rows, counts := strings.Count(byRating, `<td class="pos">`), strings.Count(byRating, `data-figure="ratingCount"`); rows == 0 || counts != rows ||
		!strings.Contains(byRating, `<a href="/charts/firefox?chart=top-rated">firefox</a>`) {
		t.Errorf("a list by rating: %d rows, %d counts of ratings, or no link to the top-rated chart", rows, counts)
	}
	if body := html.UnescapeString(string(get(t, "GET", h.Base+"/listings?q=tab&store=chrome").body)); !strings.Contains(body, "<caption>Listings of chrome matching “tab”, by size") {
		t.Error("a search's caption does not say what it matched")
	}
	if body := html.UnescapeString(string(get(t, "GET", h.Base+"/listings?store=chrome&category=Productivity").body)); !strings.Contains(body, "<caption>Listings of chrome in Productivity, by size") {
		t.Error("a category's caption does not name it")
	}
	// Page 2 numbers its rows on from page 1.
	var first struct{ NextCursor *string }
	if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1/listings?store=chrome&limit=20").body, &first); err != nil || first.NextCursor == nil {
		t.Fatalf("no second page: %v", err)
	}
	second := string(get(t, "GET", h.Base+"/listings?store=chrome&limit=20&cursor="+url.QueryEscape(*first.NextCursor)).body)
	pos := regexp.MustCompile(`<td class="pos">(\d+)</td>`).FindAllStringSubmatch(second, -1)
	if len(pos) == 0 || pos[0][1] != "21" || pos[len(pos)-1][1] != strconv.Itoa(20+len(pos)) {
		t.Errorf("page 2's rows are numbered %v, want from 21", pos)
	}
	if !strings.Contains(second, "Listings 21 to") || !strings.Contains(second, `<a href="/listings?limit=20&amp;store=chrome" rel="prev">`) {
		t.Error("page 2 does not say which listings it shows or link back to the first")
	}
	// Page 3 links the first page and the one before it, page 2.
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`).FindStringSubmatch(second)
	if next == nil {
		t.Fatal("page 2 has no next page")
	}
	third := string(get(t, "GET", h.Base+html.UnescapeString(next[1])).body)
	prev := regexp.MustCompile(`<a href="([^"]+)" rel="prev">`).FindStringSubmatch(third)
	if prev == nil || !strings.Contains(third, "First listings") || !strings.Contains(third, "Listings 41 to") {
		t.Fatal("page 3 does not link back")
	}
	back := string(get(t, "GET", h.Base+html.UnescapeString(prev[1])).body)
	rows := regexp.MustCompile(`<td class="pos">(\d+)</td><th scope="row"><a href="([^"]+)"`)
	if got, want := rows.FindAllString(back, -1), rows.FindAllString(second, -1); len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("page 3's previous page is not page 2:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCompareYouCanReach: the menu's comparison is a form, not an error;
// a listing's page starts one in the browser, whose listings add to it;
// the comparison charts its listings, one pattern and number a line, and
// removes each.
func TestCompareYouCanReach(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	form := get(t, "GET", h.Base+"/compare")
	if form.status != 200 || !strings.Contains(string(form.body), `<form method="get" action="/compare">`) {
		t.Fatalf("/compare: %d, want its form", form.status)
	}
	ls := getOK[struct{ Listings []struct{ Store, ID string } }](t, h.Base+"/api/v1/listings?store=chrome&limit=3").Listings
	page := html.UnescapeString(string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(ls[0].ID)).body))
	begin := regexp.MustCompile(`<a href="(/listings\?compare=[^"]+)">Compare it`).FindStringSubmatch(page)
	if begin == nil {
		t.Fatal("a listing's page does not start a comparison")
	}
	browser := html.UnescapeString(string(get(t, "GET", h.Base+begin[1]).body))
	add := regexp.MustCompile(`<a class="why" href="(/compare\?[^"]+)">add to comparison</a>`).FindAllStringSubmatch(browser, -1)
	if len(add) == 0 {
		t.Fatal("the browser of a comparison offers no listing to add")
	}
	cmp := get(t, "GET", h.Base+add[0][1])
	body := html.UnescapeString(string(cmp.body))
	if cmp.status != 200 || !strings.Contains(body, `<svg class="chart"`) || !strings.Contains(body, `stroke-dasharray`) || !strings.Contains(body, `<text class="end"`) {
		t.Fatalf("%s: %d, want a chart of two patterns with numbered ends", add[0][1], cmp.status)
	}
	// Its changes are written as every other page writes them: "+" for a
	// gain, U+2212 (never a hyphen-minus) for a loss, the percent too.
	cells := regexp.MustCompile(`data-figure="growth\.(change|percent)" data-value="([^"]+)">([^<]*)<`).FindAllStringSubmatch(body, -1)
	if len(cells) == 0 {
		t.Fatalf("%s: no growth figures", add[0][1])
	}
	for _, c := range cells {
		v, text := c[2], c[3]
		if strings.Contains(text, "-") || strings.HasPrefix(v, "-") && !strings.HasPrefix(text, "−") || v != "0" && !strings.HasPrefix(v, "-") && !strings.HasPrefix(text, "+") {
			t.Errorf("growth.%s %s written %q, want + for a gain and U+2212 for a loss", c[1], v, text)
		}
	}
	if strings.Contains(body, `">-`) {
		t.Errorf("%s: a figure or an axis tick with a hyphen-minus", add[0][1])
	}
	remove := regexp.MustCompile(`<a href="(/compare\?[^"]+)">remove</a>`).FindAllStringSubmatch(body, -1)
	if len(remove) != 2 {
		t.Fatalf("%d remove links, want 2", len(remove))
	}
	if left := get(t, "GET", h.Base+remove[0][1]); left.status != 200 || !strings.Contains(string(left.body), "has one so far") {
		t.Errorf("a comparison with one listing removed: %d", left.status)
	}
}

// TestListingChangesAndReviewsPages: a listing's changes and its reviews
// have pages of their own, each showing what its JSON twin holds, page
// by page.
func TestListingChangesAndReviewsPages(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	ev := getOK[eventPageJSON](t, h.Base+"/api/v1/events?kind=version&limit=1").Events[0]
	path := "/listings/" + ev.Store + "/" + url.PathEscape(ev.ID)
	log := getOK[changeLogJSON](t, h.Base+"/api/v1"+path+"/changes?limit=50")
	page := get(t, "GET", h.Base+path+"/changes")
	if page.status != 200 || !strings.HasPrefix(page.header.Get("Content-Type"), "text/html") {
		t.Fatalf("%s/changes: %d", path, page.status)
	}
	got := regexp.MustCompile(`data-event="([^"]+)"`).FindAllStringSubmatch(string(page.body), -1)
	if len(got) != len(log.Changes) {
		t.Fatalf("%s/changes shows %d changes, its JSON %d", path, len(got), len(log.Changes))
	}
	for i, c := range log.Changes {
		if got[i][1] != c.EventID {
			t.Errorf("%s/changes #%d: %s, the JSON's %s", path, i+1, got[i][1], c.EventID)
		}
	}
	if bad := get(t, "GET", h.Base+path+"/changes?cursor=nonsense"); bad.status != 400 || !strings.HasPrefix(bad.header.Get("Content-Type"), "text/html") {
		t.Errorf("a bad cursor: %d", bad.status)
	}

	ff := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=firefox&limit=1").Listings[0]
	rpath := "/listings/firefox/" + url.PathEscape(ff.ID) + "/reviews"
	var reviews struct {
		Reviews    []struct{ ID string }
		NextCursor *string
	}
	for _, q := range []string{"", "?stars=critical"} {
		if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1"+rpath+q).body, &reviews); err != nil {
			t.Fatal(err)
		}
		body := string(get(t, "GET", h.Base+rpath+q).body)
		ids := regexp.MustCompile(`data-review="([^"]+)"`).FindAllStringSubmatch(body, -1)
		if len(ids) != len(reviews.Reviews) {
			t.Fatalf("%s%s shows %d reviews, its JSON %d", rpath, q, len(ids), len(reviews.Reviews))
		}
		for i, r := range reviews.Reviews {
			if ids[i][1] != r.ID {
				t.Errorf("%s%s #%d: %s, the JSON's %s", rpath, q, i+1, ids[i][1], r.ID)
			}
		}
		if (reviews.NextCursor != nil) != strings.Contains(body, `rel="next"`) {
			t.Errorf("%s%s: a next page %v, the page's link %v", rpath, q, reviews.NextCursor != nil, !(reviews.NextCursor != nil))
		}
	}
	chrome := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=chrome&limit=1").Listings[0]
	// The reviews' Atom twin holds the page's reviews, newest first, each
	// entry linking the page, with the page's filters.
	var rated string // a firefox listing with a stored review
	for _, l := range getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=firefox&limit=100").Listings {
		if rs := getOK[struct{ Reviews []any }](t, h.Base+"/api/v1/listings/firefox/"+url.PathEscape(l.ID)+"/reviews").Reviews; len(rs) > 0 {
			rated = l.ID
			break
		}
	}
	fpath := "/listings/firefox/" + url.PathEscape(rated) + "/reviews"
	for _, q := range []string{"", "?stars=positive"} {
		feed := get(t, "GET", h.Base+fpath+".atom"+q)
		parsed, err := gofeed.NewParser().ParseString(string(feed.body))
		if feed.status != 200 || !strings.HasPrefix(feed.header.Get("Content-Type"), "application/atom+xml") || err != nil || parsed.FeedType != "atom" {
			t.Fatalf("%s.atom%s: %d %s %v", fpath, q, feed.status, feed.header.Get("Content-Type"), err)
		}
		var doc struct{ Reviews []struct{ ID, Text string } }
		if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1"+fpath+q).body, &doc); err != nil {
			t.Fatal(err)
		}
		if len(parsed.Items) != len(doc.Reviews) || len(doc.Reviews) == 0 && q == "" {
			t.Fatalf("%s.atom%s: %d entries, the JSON %d reviews", fpath, q, len(parsed.Items), len(doc.Reviews))
		}
		for i, it := range parsed.Items {
			if want := "tag:edge,2026:review:firefox:" + rated + ":" + doc.Reviews[i].ID; it.GUID != want || it.Description != doc.Reviews[i].Text ||
				!strings.HasSuffix(it.Link, fpath+q) {
				t.Errorf("%s.atom%s entry %d: %s %q %s, want %s and its page", fpath, q, i, it.GUID, it.Description, it.Link, want)
			}
		}
		if page := string(get(t, "GET", h.Base+fpath+q).body); !strings.Contains(page, `href="`+html.EscapeString(fpath+".atom"+q)+`"`) {
			t.Errorf("%s%s does not link its Atom twin", fpath, q)
		}
	}
	// A listing's page links its page in its store, and the charts it is
	// in, as its JSON places it.
	top := getOK[struct {
		Entries []struct{ Listing struct{ ID string } }
	}](t, h.Base+"/api/v1/charts/chrome?chart=top").Entries[0].Listing.ID
	if body := html.UnescapeString(string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(top)).body)); !strings.Contains(body, `<a href="https://chromewebstore.google.com/detail/`+top+`" rel="external">`) ||
		!strings.Contains(body, `<a href="/charts/chrome?chart=top">Largest #1</a>`) {
		t.Error("the largest chrome listing's page does not link its store page and its first place in the largest chart")
	}
	// A listing's page links its reviews where its store's are kept: no
	// dead end on chrome's.
	if body := string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(chrome.ID)).body); strings.Contains(body, "/reviews\"") {
		t.Error("a chrome listing's page links reviews chrome's store does not keep")
	}
	if body := string(get(t, "GET", h.Base+"/listings/firefox/"+url.PathEscape(ff.ID)).body); !strings.Contains(body, `href="`+rpath+`"`) {
		t.Errorf("a firefox listing's page does not link its reviews, %s", rpath)
	}
	if body := string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(chrome.ID)+"/reviews").body); !strings.Contains(body, "reviews are not collected") {
		t.Error("chrome's reviews page does not say they are not collected")
	}
}

// TestSearchSuggests: a search that finds nothing suggests the listings
// near it (its words less their last letters), each linking its page.
func TestSearchSuggests(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	l := getOK[struct {
		Listings []struct{ Store, ID, Name string }
	}](t, h.Base+"/api/v1/listings?store=chrome&limit=1").Listings[0]
	typo := l.Name + "qx"
	var none struct{ Listings []any }
	if err := json.Unmarshal(get(t, "GET", h.Base+"/api/v1/listings?q="+url.QueryEscape(typo)).body, &none); err != nil || len(none.Listings) != 0 {
		t.Fatalf("%q finds %d listings: want a search that finds none", typo, len(none.Listings))
	}
	body := html.UnescapeString(string(get(t, "GET", h.Base+"/listings?q="+url.QueryEscape(typo)).body))
	if !strings.Contains(body, "No listing matches") || !strings.Contains(body, `<a href="/listings/chrome/`+l.ID+`">`) {
		t.Errorf("a search for %q does not suggest %s/%s", typo, l.Store, l.ID)
	}
	if body := string(get(t, "GET", h.Base+"/listings?q="+url.QueryEscape(l.Name)).body); strings.Contains(body, "No listing matches") {
		t.Error("a search that finds listings suggests others")
	}
	// A search too short is an error page whose form keeps what was
	// typed and the browser's filters, to search again.
	short := get(t, "GET", h.Base+"/listings?q=a&store=chrome&sort=rating")
	page := string(short.body)
	if short.status != 400 || !strings.Contains(page, `id="q" name="q" size="20" minlength="2" value="a"`) ||
		!strings.Contains(page, `<input type="hidden" name="store" value="chrome">`) || !strings.Contains(page, `<input type="hidden" name="sort" value="rating">`) {
		t.Errorf("a one-letter search: %d, its form does not keep the search and its filters", short.status)
	}
}

// TestBrowseCounts: the browser says how many listings a query lists,
// from the figures (every live listing, a store's, a category's, a
// topic's) or counted (searches and other filters), and the count is
// what the API lists page by page; a search that finds nothing says no
// count, but that nothing matches.
func TestBrowseCounts(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	cats := getOK[struct{ Categories []struct{ Name string } }](t, h.Base+"/api/v1/categories/chrome").Categories
	tags := getOK[struct{ Tags []struct{ Slug string } }](t, h.Base+"/api/v1/tags").Tags
	if len(cats) == 0 || len(tags) == 0 {
		t.Fatal("no category or topic")
	}
	count := regexp.MustCompile(`<p class="note">([\d,]+) listings?\.</p>`)
	for _, q := range []string{"", "store=chrome", "store=chrome&category=" + url.QueryEscape(cats[len(cats)-1].Name),
		"tag=" + url.QueryEscape(tags[0].Slug), "store=edge&tag=" + url.QueryEscape(tags[0].Slug) + "&sort=rating",
		// Searches and other filters: counted by the engine.
		"q=pdf", "store=chrome&q=tab&sort=name", "store=firefox&minRating=4", "featured=true&sort=growth7d",
		"store=chrome&permission=storage&category=" + url.QueryEscape(cats[0].Name)} {
		listed := 0
		for cursor := ""; ; {
			var p struct {
				Listings   []any
				NextCursor *string
			}
			u := h.Base + "/api/v1/listings?limit=100&" + q
			if cursor != "" {
				u += "&cursor=" + url.QueryEscape(cursor)
			}
			if err := json.Unmarshal(get(t, "GET", u).body, &p); err != nil {
				t.Fatal(err)
			}
			listed += len(p.Listings)
			if p.NextCursor == nil {
				break
			}
			cursor = *p.NextCursor
		}
		m := count.FindStringSubmatch(string(get(t, "GET", h.Base+"/listings?"+q).body))
		if m == nil || strings.ReplaceAll(m[1], ",", "") != strconv.Itoa(listed) {
			t.Errorf("/listings?%s says %v listings, the API lists %d", q, m, listed)
		}
	}
	if body := string(get(t, "GET", h.Base+"/listings?q=zzqqxxnothing").body); count.MatchString(body) {
		t.Error("a search that finds nothing says a count")
	}
}

// TestBrowseGoesBackFromAnyPage: from any page of the listings' browser
// the previous page is linked, well past the first pages, and it is the
// page the reader came from, rows and numbers alike; in an order of
// names, of sizes and of growth either way (a growth's listings without
// a value close the order: walked back only in the first pages).
func TestBrowseGoesBackFromAnyPage(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	rowRE := regexp.MustCompile(`<td class="pos">(\d+)</td><th scope="row"><a href="([^"]+)"`)
	nextRE := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	prevRE := regexp.MustCompile(`<a href="([^"]+)" rel="prev">`)
	rows := func(body string) string { return strings.Join(rowRE.FindAllString(body, -1), "\n") }
	for _, q := range []string{"limit=5", "limit=5&store=chrome&sort=name", "limit=4&sort=growth7d&order=asc", "limit=3&store=apple&sort=created"} {
		var pages []string // the rows of each page, walked forward
		var links []string // the address of each page
		u := "/listings?" + q
		for len(pages) < 45 {
			body := html.UnescapeString(string(get(t, "GET", h.Base+u).body))
			pages, links = append(pages, rows(body)), append(links, u)
			next := nextRE.FindStringSubmatch(body)
			if next == nil {
				break
			}
			u = next[1]
		}
		if len(pages) < 30 {
			t.Fatalf("%s: only %d pages", q, len(pages))
		}
		backs := 0
		for n := len(pages); n >= 2; n-- { // page n, from 1
			body := html.UnescapeString(string(get(t, "GET", h.Base+links[n-1]).body))
			prev := prevRE.FindStringSubmatch(body)
			if prev == nil {
				t.Fatalf("%s: page %d links no page before it", q, n)
			}
			if !strings.Contains(prev[1], "cursor=") {
				// The first page, linked from page 2, or from a later page
				// whose page before is not found (a growth's listings
				// without a value, past page 20).
				if n != 2 && !strings.Contains(q, "growth") {
					t.Errorf("%s: page %d links the first page as the one before it", q, n)
				}
				continue
			}
			back := html.UnescapeString(string(get(t, "GET", h.Base+prev[1]).body))
			if got := rows(back); got == "" || got != pages[n-2] {
				t.Fatalf("%s: page %d's page before is not page %d:\n%.400s\nwant\n%.400s", q, n, n-1, got, pages[n-2])
			}
			backs++
		}
		if backs < 20 {
			t.Errorf("%s: only %d pages link the page before them by cursor", q, backs)
		}
	}
}

// TestOlderPagesLeadBackToTheNewest: the changes' and a listing's
// reviews' later pages link their first, with the same filters; the
// first links none.
func TestOlderPagesLeadBackToTheNewest(t *testing.T) {
	cfg, conn := chtest.Need(t, srv).Migrated(t)
	o := edgetest.Seed(800)
	o.ReviewsPerListing = 30 // more than a page of reviews
	if _, err := seed.Write(context.Background(), conn, o, seed.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	h := start(t, edgetest.Dataset{CH: &cfg}, func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	ff := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=firefox&sort=ratingcount&limit=1").Listings[0].ID
	next := regexp.MustCompile(`<a href="([^"]+)" rel="next">`)
	for _, c := range []struct{ first, newest string }{
		{"/events", `<a href="/events">Newest changes</a>`},
		{"/listings/firefox/" + url.PathEscape(ff) + "/reviews?stars=all", `<a href="/listings/firefox/` + url.PathEscape(ff) + `/reviews">Newest reviews</a>`},
	} {
		first := html.UnescapeString(string(get(t, "GET", h.Base+c.first).body))
		m := next.FindStringSubmatch(first)
		if m == nil || strings.Contains(first, ">Newest ") {
			t.Fatalf("%s: no older page, or a link to the newest on the newest (%d events)", c.first, strings.Count(first, "data-event="))
		}
		if older := html.UnescapeString(string(get(t, "GET", h.Base+m[1]).body)); !strings.Contains(older, c.newest) {
			t.Errorf("%s: the older page %s does not link back: %s", c.first, m[1], c.newest)
		}
	}
}

// TestListingPageRingsJumps: a listing's size chart rings each day its
// history's answer flags a jump, and says under it what the step was.
func TestListingPageRingsJumps(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, st := range []string{"chrome", "firefox", "apple", "googleplay", "edge"} {
		ls := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?limit=40&store="+st).Listings
		for _, l := range ls {
			path := "/listings/" + st + "/" + url.PathEscape(l.ID)
			hist := getOK[struct {
				Snapshots []struct {
					Day   string
					Flags []string
				}
			}](t, h.Base+"/api/v1"+path+"/history")
			var jumps []string
			for _, s := range hist.Snapshots {
				if slices.Contains(s.Flags, "jump") {
					jumps = append(jumps, s.Day)
				}
			}
			page := html.UnescapeString(string(get(t, "GET", h.Base+path).body))
			if rings := strings.Count(page, `<circle class="jump"`); rings != len(jumps) {
				t.Errorf("%s: %d rings, its history flags %d jumps %v", path, rings, len(jumps), jumps)
			}
			for _, d := range jumps {
				if !strings.Contains(page, d+" (") || !strings.Contains(page, "a jump on "+d) {
					t.Errorf("%s: the jump of %s is not said under its chart or in its text", path, d)
				}
			}
			found += len(jumps)
		}
	}
	t.Logf("%d jumps ringed", found)
	if found == 0 {
		t.Fatal("no listing of the data has a jump")
	}
}
