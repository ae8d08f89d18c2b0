package edge_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/views"
)

var (
	browseRow  = regexp.MustCompile(`<a href="/listings/(chrome|edge|firefox|apple|googleplay)/([^"]+)">`)
	browseChip = regexp.MustCompile(`<a class="chip" href="([^"]+)">([^<]+) <span`)
	browseFile = regexp.MustCompile(`<a href="(/listings\?[^"]+)" download>(CSV|NDJSON)</a>`)
)

// rowsOf returns the store:id of each listing a listings' page lists, in
// its order.
func rowsOf(body []byte) []string {
	var out []string
	for _, m := range browseRow.FindAllSubmatch(body, -1) {
		id, _ := url.PathUnescape(string(m[2]))
		out = append(out, string(m[1])+":"+id)
	}
	return out
}

// TestBrowseFiltersAndFiles: the listings' page offers every filter of
// the read (the fold open when one is set, each field holding its
// value), lists what its JSON twin lists for them, shows each filter as a
// chip whose link drops just that filter, offers the categories, topics
// and permissions to choose from, and links the same list as CSV and
// NDJSON files holding the same listings in the same order; every list
// page links its files; the compare page adds a listing by name.
func TestBrowseFiltersAndFiles(t *testing.T) {
	cfg := seeded(t)
	h := start(t, cfg, func(c *edge.Config) { c.PageRate = 0 })
	for _, job := range []string{"views", "editions", "ranks"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("browser", func(t *testing.T) { browseFilters(t, h) })
	t.Run("list pages", func(t *testing.T) { listPagesLinkTheirFiles(t, h) })
	t.Run("compare by name", func(t *testing.T) { compareByName(t, h) })
	t.Run("listing page", func(t *testing.T) { listingPageInFull(t, h) })
	t.Run("categories and permissions", func(t *testing.T) { categoriesAndPermissions(t, h) })
	t.Run("category page", func(t *testing.T) { categoryPage(t, h) })
	t.Run("review search", func(t *testing.T) { reviewSearchAcrossListings(t, h, cfg) })
}

// reviewSearchAcrossListings: /reviews/search is the form alone without words, and
// with them the listings its JSON twin lists, in its order, each linking
// the listing's reviews with the same words.
func reviewSearchAcrossListings(t *testing.T, h *harness, cfg edgetest.Dataset) {
	// Two firefox listings with 3 and 4 reviews of a word no seed writes.
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var rows []analytics.ReviewRow
	at := time.Date(2026, 2, 20, 0, 0, 0, 0, time.UTC)
	for k, l := range []views.Listing{firstLive(t, h, views.Firefox), h.State.Load().Replica.OfStore(views.Firefox)[len(h.State.Load().Replica.OfStore(views.Firefox))-1]} {
		for i := range 3 + k {
			rows = append(rows, analytics.ReviewRow{Store: views.Firefox, ListingID: l.ID, ReviewID: fmt.Sprintf("qw-%d-%d", k, i),
				PostedAt: at.Add(time.Duration(i) * time.Minute), Stars: 2, Author: "A", Lang: "en", Text: "the quillwhistle is good", CrawledAt: at})
		}
	}
	if err := analytics.WriteReviews(context.Background(), conn, rows); err != nil {
		t.Fatal(err)
	}
	form := get(t, "GET", h.Base+"/reviews/search")
	if form.status != http.StatusOK || !strings.Contains(string(form.body), `<form method="get" action="/reviews/search"`) || strings.Contains(string(form.body), `<table>`) {
		t.Fatalf("the form alone: %d", form.status)
	}
	twin := getOK[struct {
		Stars string
		Hits  []struct {
			Store, ID string
			Matches   int
		}
	}](t, h.Base+"/api/v1/reviews/search?q=quillwhistle")
	if len(twin.Hits) == 0 {
		t.Fatal("no listing has 3 reviews saying quillwhistle: the comparison says nothing")
	}
	page := get(t, "GET", h.Base+"/reviews/search?q=quillwhistle")
	var want []string
	for _, x := range twin.Hits {
		want = append(want, jsonRaw(float64(x.Matches)))
		link := `href="/listings/` + x.Store + `/` + url.PathEscape(x.ID) + `/reviews?q=quillwhistle`
		if twin.Stars != "all" {
			link += "&amp;stars=" + twin.Stars // the search's stars, as the page of reviews takes them
		}
		if !strings.Contains(string(page.body), link+`"`) {
			t.Errorf("the page does not link %s:%s's reviews with the search's words and stars (%s)", x.Store, x.ID, link)
		}
	}
	if got := pageFigures(page.body, ".matches"); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the page's matches %v, its JSON's %v", got, want)
	}
	if d := problem(t, get(t, "GET", h.Base+"/api/v1/reviews/search?q=quillwhistle&cursor=nope"), http.StatusBadRequest); d == "" {
		t.Error("a bad cursor has no detail")
	}
}

// pageFigures returns the data-value of each data-figure of a page whose
// name ends with suffix, in the page's order.
func pageFigures(body []byte, suffix string) []string {
	var out []string
	for _, m := range regexp.MustCompile(`data-figure="([^"]+)" data-value="([^"]*)"`).FindAllSubmatch(body, -1) {
		if strings.HasSuffix(string(m[1]), suffix) {
			out = append(out, string(m[2]))
		}
	}
	return out
}

// categoriesAndPermissions: the categories' page sorted by a figure
// shows the categories and figures of its JSON twin in its order, and
// each heading sorts by its figure; the permissions' page shows its
// twin's counts in order.
func categoriesAndPermissions(t *testing.T, h *harness) {
	for _, sort := range []string{"name", "growth7d", "size", "listings"} {
		twin := getOK[struct{ Categories []map[string]any }](t, h.Base+"/api/v1/categories/chrome?sort="+sort)
		page := get(t, "GET", h.Base+"/categories/chrome?sort="+sort)
		var sizes, growth []string
		for _, c := range twin.Categories {
			sizes = append(sizes, jsonRaw(c["totalSize"]))
			growth = append(growth, jsonRaw(c["growth7d"]))
		}
		if got := pageFigures(page.body, ".totalSize"); len(sizes) == 0 || strings.Join(got, "|") != strings.Join(sizes, "|") {
			t.Errorf("sort=%s: the page's sizes %v, the JSON's %v", sort, got, sizes)
		}
		if got := pageFigures(page.body, ".growth7d"); strings.Join(got, "|") != strings.Join(growth, "|") {
			t.Errorf("sort=%s: the page's growth %v, the JSON's %v", sort, got, growth)
		}
		if !strings.Contains(string(page.body), `href="/categories/chrome?sort=growth30d"`) {
			t.Errorf("sort=%s: no heading sorts by the 30-day growth", sort)
		}
	}
	if d := problem(t, get(t, "GET", h.Base+"/api/v1/categories/chrome?sort=best"), http.StatusBadRequest); !strings.HasPrefix(d, "sort:") {
		t.Errorf("an unknown sort: %q", d)
	}
	perms := getOK[struct{ Permissions []map[string]any }](t, h.Base+"/api/v1/permissions")
	var want []string
	for _, p := range perms.Permissions {
		want = append(want, jsonRaw(p["count"]))
	}
	if got := pageFigures(get(t, "GET", h.Base+"/permissions").body, ".count"); len(want) == 0 || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the permissions' page %v, its JSON %v", got, want)
	}
}

// listingPageInFull: a listing's page explains its permissions in words,
// lists the versions its changes read (each as its events say), and
// charts its rating day by day with each day's value in a title.
func listingPageInFull(t *testing.T, h *harness) {
	ev := getOK[struct {
		Events []struct{ ID, After string }
	}](t, h.Base+"/api/v1/events?store=chrome&kind=version&limit=1").Events
	if len(ev) == 0 {
		t.Fatal("the test data has no new version in chrome")
	}
	page := string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(ev[0].ID)).body)
	if !strings.Contains(page, `<h2 id="versions">Versions</h2>`) || !strings.Contains(page, ">"+html.EscapeString(ev[0].After)+" <span") {
		t.Errorf("the page of %s lists no version %s", ev[0].ID, ev[0].After)
	}
	tabs := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=chrome&permission=tabs&limit=1").Listings
	if len(tabs) == 0 {
		t.Fatal("no chrome listing asks for tabs")
	}
	page = string(get(t, "GET", h.Base+"/listings/chrome/"+url.PathEscape(tabs[0].ID)).body)
	if !strings.Contains(page, "<code>tabs</code>: see the addresses and titles of your tabs") {
		t.Error("the tabs permission is not explained in words")
	}
	rated := getOK[struct{ Listings []struct{ ID string } }](t, h.Base+"/api/v1/listings?store=firefox&minRatingCount=1&limit=1").Listings
	if len(rated) == 0 {
		t.Fatal("no rated firefox listing")
	}
	page = string(get(t, "GET", h.Base+"/listings/firefox/"+url.PathEscape(rated[0].ID)).body)
	if !strings.Contains(page, `<h2 id="rating-chart">`) || !strings.Contains(page, " stars</title>") {
		t.Error("a rated listing's page has no rating chart with each day's value")
	}
	// Its rank in its category, day by day, as the history has it.
	hist := getOK[struct {
		Snapshots []struct {
			Day          string
			CategoryRank *int
		}
	}](t, h.Base+"/api/v1/listings/firefox/"+url.PathEscape(rated[0].ID)+"/history")
	var day string
	var rank int
	for _, sn := range hist.Snapshots {
		if sn.CategoryRank != nil {
			day, rank = sn.Day, *sn.CategoryRank
		}
	}
	if day == "" {
		t.Fatalf("the history of firefox %s has no category rank after the ranks job", rated[0].ID)
	}
	if want := fmt.Sprintf("latest %d on %s", rank, day); !strings.Contains(page, `<h2 id="category-rank-chart">`) || !strings.Contains(page, want) {
		t.Errorf("the listing's page charts no rank in its category ending %q", want)
	}
}

// browseFilters is TestBrowseFiltersAndFiles's browser.
func browseFilters(t *testing.T, h *harness) {
	query := "store=chrome&permission=tabs&minRating=3&kind=extension&sort=rating"
	page := get(t, "GET", h.Base+"/listings?"+query)
	if page.status != http.StatusOK {
		t.Fatalf("/listings?%s: %d %s", query, page.status, page.body)
	}
	twin := getOK[struct{ Listings []struct{ Store, ID string } }](t, h.Base+"/api/v1/listings?"+query)
	if len(twin.Listings) == 0 {
		t.Fatal("the filters keep no listing of the test data: the comparison says nothing")
	}
	var want []string
	for _, l := range twin.Listings {
		want = append(want, l.Store+":"+l.ID)
	}
	rows := rowsOf(page.body)
	if strings.Join(rows, " ") != strings.Join(want, " ") {
		t.Errorf("the page lists %v, its JSON twin %v", rows, want)
	}
	body := string(page.body)
	for _, part := range []string{`<details class="more" open>`, `name="permission" type="text" value="tabs"`, `name="minRating" type="number" value="3"`,
		`<option value="extension" selected>`, `<datalist id="categories">`, `<datalist id="permissions">`, `<datalist id="topics">`,
		`<option value="tabs"></option>`, `list="categories"`, `name="hostAccess" value="all">`, "3 more filters (above)"} {
		if !strings.Contains(body, part) {
			t.Errorf("the page lacks %s", part)
		}
	}
	// Each chip drops its filter and keeps the others.
	chips := browseChip.FindAllStringSubmatch(body, -1)
	if len(chips) != 4 { // store, kind, minRating, permission: sort is not a filter
		t.Errorf("chips %q, want store, type, rating from and permission", chips)
	}
	all, _ := url.ParseQuery(query)
	for _, c := range chips {
		u, err := url.Parse(html.UnescapeString(c[1]))
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		dropped := 0
		for k := range all {
			if q.Get(k) == "" {
				dropped++
			}
		}
		if dropped != 1 || len(q) != len(all)-1 {
			t.Errorf("chip %q links %s: it must drop exactly its own filter", c[2], c[1])
		}
		if r := get(t, "GET", h.Base+u.String()); r.status != http.StatusOK {
			t.Errorf("chip %q: %d", c[2], r.status)
		}
	}
	// The files hold the same listings in the same order, the first of
	// them the page's rows.
	files := browseFile.FindAllStringSubmatch(body, -1)
	if len(files) != 2 {
		t.Fatalf("download links %q, want CSV and NDJSON", files)
	}
	for _, f := range files {
		r := get(t, "GET", h.Base+html.UnescapeString(f[1]))
		if r.status != http.StatusOK || !strings.Contains(r.header.Get("Content-Disposition"), "attachment") {
			t.Fatalf("%s: %d %q", f[1], r.status, r.header.Get("Content-Disposition"))
		}
		lines := bytes.Split(bytes.TrimSpace(r.body), []byte("\n"))
		if f[2] == "CSV" {
			lines = lines[1:] // the header
		}
		if len(lines) < len(want) {
			t.Fatalf("%s: %d rows, fewer than the page's %d", f[1], len(lines), len(want))
		}
		for i, w := range want {
			id := w[strings.IndexByte(w, ':')+1:]
			if !bytes.Contains(lines[i], []byte(id)) {
				t.Errorf("%s row %d is not %s: %.200s", f[2], i, w, lines[i])
			}
		}
	}
	// Without filters: the fold closed, no chip.
	plain := string(get(t, "GET", h.Base+"/listings").body)
	if strings.Contains(plain, `<details class="more" open>`) || strings.Contains(plain, `class="chip"`) {
		t.Error("the unfiltered page opens the filters or shows chips")
	}
}

// fileLink finds a page's links to its list as files.
var fileLink = regexp.MustCompile(`<link rel="alternate" type="(text/csv|application/x-ndjson)" href="([^"]+)">`)

// listPagesLinkTheirFiles: every page that shows a list links the list
// as CSV and NDJSON (the same read's files), and each link answers that
// file.
func listPagesLinkTheirFiles(t *testing.T, h *harness) {
	ffx := firstLive(t, h, views.Firefox) // chrome's reviews are not collected
	slug := getOK[struct{ Tags []struct{ Slug string } }](t, h.Base+"/api/v1/tags").Tags[0].Slug
	cat := getOK[struct{ Categories []struct{ Name string } }](t, h.Base+"/api/v1/categories/chrome").Categories[0].Name
	// (The browser's files are its own links: browseFilters.)
	for _, page := range []string{"/charts/chrome?chart=rising", "/categories/chrome", "/tags", "/permissions",
		"/tags/" + slug + "/chrome", "/weeks", "/events?store=chrome", "/listings/firefox/" + url.PathEscape(ffx.ID) + "/reviews",
		"/developers/firefox/" + url.PathEscape(ffx.Developer), "/categories/chrome/" + views.CategorySlug(cat)} {
		a := get(t, "GET", h.Base+page)
		if a.status != http.StatusOK {
			t.Fatalf("%s: %d", page, a.status)
		}
		links := fileLink.FindAllStringSubmatch(string(a.body), -1)
		if len(links) != 2 {
			t.Errorf("%s links %d files, want CSV and NDJSON", page, len(links))
			continue
		}
		for _, m := range links {
			if strings.HasPrefix(m[2], "/api/") {
				t.Errorf("%s links its %s file at the API, %s: a reader's downloads would count against the API's limits", page, m[1], m[2])
			}
			f := get(t, "GET", h.Base+html.UnescapeString(m[2]))
			if f.status != http.StatusOK || !strings.HasPrefix(f.header.Get("Content-Type"), m[1]) || len(f.body) == 0 && m[1] == "text/csv" { // a list with no row is an empty NDJSON
				t.Errorf("%s: its %s link %s answers %d %q", page, m[1], m[2], f.status, f.header.Get("Content-Type"))
			}
		}
		if !strings.Contains(string(a.body), "as CSV (") {
			t.Errorf("%s does not say what its files hold", page)
		}
	}
}

// compareByName: the compare page adds a listing by its name without
// script (a search of the listings that keeps the comparison, whose
// results link the comparison with each added), and the header's search
// keeps the comparison too.
func compareByName(t *testing.T, h *harness) {
	l := firstLive(t, h, views.Chrome)
	ref := "chrome:" + l.ID
	page := string(get(t, "GET", h.Base+"/compare?listings="+url.QueryEscape(ref)).body)
	hidden := `<input type="hidden" name="compare" value="` + html.EscapeString(ref) + `">`
	if !strings.Contains(page, `<label for="add">Add a listing by its name`) || strings.Count(page, hidden) != 2 {
		t.Fatalf("the compare page has no search that keeps the comparison (in its form and the header's): %s", page)
	}
	other := firstLive(t, h, views.Firefox)
	word := strings.Fields(other.Name)[0]
	found := string(get(t, "GET", h.Base+"/listings?q="+url.QueryEscape(word)+"&compare="+url.QueryEscape(ref)).body)
	add := "listings=" + url.QueryEscape(ref+",firefox:"+other.ID)
	if !strings.Contains(html.UnescapeString(found), add) {
		t.Errorf("searching %q to add to the comparison does not link %s", word, add)
	}
	if !strings.Contains(found, hidden) {
		t.Error("the listings' header search drops the comparison being built")
	}
}
