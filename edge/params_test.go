package edge_test

import (
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/missgate"
	"github.com/edge-stats/edge/views"
)

// ask asks path of h with accept as its Accept header ("" sends none).
func ask(t *testing.T, h *harness, path, accept string) answer {
	t.Helper()
	var hdr map[string]string
	if accept != "" {
		hdr = map[string]string{"Accept": accept}
	}
	return call(t, "GET", h.Base+path, hdr, "")
}

// refusedFor checks that a is a 400 whose words (the detail of a
// problem, or the text of an HTML page when page) contain want.
func refusedFor(t *testing.T, a answer, page bool, want string) {
	t.Helper()
	ct := a.header.Get("Content-Type")
	switch {
	case a.status != 400:
		t.Errorf("%d, want 400: %.300s", a.status, a.body)
	case page && !strings.HasPrefix(ct, "text/html"):
		t.Errorf("a page answers %s, want its HTML error page", ct)
	case !page && ct != "application/problem+json":
		t.Errorf("an API answers %s, want problem+json", ct)
	case page && !strings.Contains(html.UnescapeString(string(a.body)), want):
		t.Errorf("the page does not say %q: %.400s", want, a.body)
	case !page:
		var p struct{ Detail string }
		if err := json.Unmarshal(a.body, &p); err != nil || !strings.Contains(p.Detail, want) {
			t.Errorf("the detail does not say %q: %.400s", want, a.body)
		}
	}
}

// TestParameterGivenTwiceIsRefused asks every kind of route with one
// parameter given twice (as sent, escaped, or with an empty value): each
// answers 400 naming it, problem+json on the APIs and the HTML error page
// on the pages, where the query read one value and the page's caption
// and links another; the same address with it once is not refused so.
func TestParameterGivenTwiceIsRefused(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	l := firstLive(t, h, views.Firefox)
	lp := "/listings/firefox/" + url.PathEscape(l.ID)
	const html = "text/html"
	for _, c := range []struct {
		path, twice, accept string // twice: the parameter given twice, appended again
		again               string
	}{
		{"/api/v1/listings?limit=2", "limit", "", "3"},
		{"/api/v1/listings?store=chrome&q=vpn", "store", "", "apple"},
		{"/api/v1/listings?q=vpn", "q", "", ""},
		{"/api/v1/compare?listings=chrome:a,firefox:b&days=7", "days", "", "30"},
		{"/api/v1/events?kind=version", "kind", "", "permissions"},
		{"/api/v1" + lp + "/reviews?stars=all", "stars", "", "critical"},
		{"/api/v1" + lp + "/changes?limit=5", "limit", "", "6"},
		{"/api/v1/reviews/search?q=slow", "q", "", "fast"},
		{"/api/v1/charts/chrome?chart=top", "chart", "", "new"},
		{"/api/extensions?platform=0", "platform", "", "1"},
		{"/api/extensions.csv?pageSize=5", "pageSize", "", "6"},
		{"/listings?store=chrome&q=vpn", "store", html, "apple"},
		{"/listings?store=chrome&q=vpn", "q", html, "Totally Different Words"},
		{"/compare?listings=chrome:a,firefox:b", "listings", html, "apple:c"},
		{lp + "/reviews?q=slow", "q", html, "fast"},
		{lp + "/changes?cursor=x", "cursor", html, "y"},
		{"/events?kind=version", "kind", html, "permissions"},
		{"/charts/chrome?chart=top", "chart", html, "new"},
		{"/?x=1", "x", html, "2"},
	} {
		t.Run(c.path+"&"+c.twice, func(t *testing.T) {
			page := c.accept != ""
			a := ask(t, h, c.path+"&"+c.twice+"="+url.QueryEscape(c.again), c.accept)
			refusedFor(t, a, page, `"`+c.twice+`"`)
			// A page of another site reads why the API refused it.
			if strings.HasPrefix(c.path, "/api") && a.header.Get("Access-Control-Allow-Origin") != "*" {
				t.Errorf("the refusal has no Access-Control-Allow-Origin: *, which every API answer has")
			}
			if once := ask(t, h, c.path, c.accept); strings.Contains(string(once.body), "more than once") {
				t.Errorf("sent once, %s is refused as sent twice", c.twice)
			}
		})
	}
	// Names are read decoded, as the handlers read them.
	refusedFor(t, ask(t, h, "/api/v1/listings?%6Cimit=2&limit=3", ""), false, `"limit"`)
	refusedFor(t, ask(t, h, "/api/extensions?q+x=a&q%20x=b", ""), false, `"q x"`)
}

// TestQueryOfSpacesIsRefused: q of only spaces is a 400 on every route
// that takes q (it has fewer than 2 characters once trimmed), pages
// included, while an empty q (a form's field left empty) searches
// nothing.
func TestQueryOfSpacesIsRefused(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	l := firstLive(t, h, views.Firefox)
	lp := "/listings/firefox/" + url.PathEscape(l.ID)
	for _, c := range []struct {
		path, accept string
		empty        int // the status with q empty
	}{
		{"/api/v1/listings?store=chrome", "", 200},
		{"/api/extensions?platform=0", "", 200},
		{"/api/extensions.csv?platform=0", "", 200},
		{"/listings?store=chrome", "text/html", 200},
		{"/api/v1" + lp + "/reviews?stars=all", "", 0}, // its reviews are in ClickHouse, not here
		{lp + "/reviews?stars=all", "text/html", 0},
		{"/api/v1/reviews/search?stars=all", "", 400}, // q is required there
	} {
		t.Run(c.path, func(t *testing.T) {
			for _, spaces := range []string{"%20%20", "%20", "+++", "%09%20"} {
				r := ask(t, h, c.path+"&q="+spaces, c.accept)
				refusedFor(t, r, c.accept != "", "q")
				// Its detail says what is wrong with what was sent, not
				// with the "" it trims to.
				if body := html.UnescapeString(string(r.body)); !strings.Contains(body, "only spaces") || strings.Contains(body, `"" is`) || strings.Contains(body, `\"\" is`) {
					t.Errorf("q=%s: %.300s", spaces, r.body)
				}
			}
			if empty := ask(t, h, c.path+"&q=", c.accept); c.empty != 0 && empty.status != c.empty {
				t.Errorf("q empty: %d, want %d", empty.status, c.empty)
			} else if c.empty == 0 && empty.status == 400 {
				t.Errorf("q empty: 400 %.200s", empty.body)
			}
		})
	}
}

// TestSearchSuggestionsAreBounded: a fruitless search's suggestions try
// its prefixes and then its longest words, a few of them only: a listing
// one of its words finds is suggested while it is among them, and not
// once twenty longer words come first (the search of 2,000 words that
// tried every one of them cost a thousand searches).
func TestSearchSuggestionsAreBounded(t *testing.T) {
	h := start(t, synthetic(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	var word string
	for _, st := range []views.Store{views.Chrome, views.Firefox, views.Edge} {
		for _, w := range strings.Fields(firstLive(t, h, st).Name) {
			if len(w) >= 4 && len(w) > len(word) && strings.Trim(w, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") == "" {
				word = w
			}
		}
	}
	if word == "" {
		t.Fatal("no listing's name has a word of 4 letters or more")
	}
	junk := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, "zqxj"+strings.Repeat("v", len(word)+i)+"k")
		}
		return out
	}
	suggests := func(q []string) bool {
		a := ask(t, h, "/listings?q="+url.QueryEscape(strings.Join(q, " ")), "text/html")
		if a.status != 200 || !strings.Contains(string(a.body), "isting matches") {
			t.Fatalf("%d: the search of %d words finds listings", a.status, len(q))
		}
		return strings.Contains(string(a.body), "Near it:")
	}
	if !suggests(append(junk(2), word)) {
		t.Errorf("a search of two junk words and %q suggests nothing", word)
	}
	if suggests(append(junk(20), word)) {
		t.Errorf("a search of twenty junk words and %q, shorter than them, tried every word", word)
	}
}

// TestPageCacheKeysAreCanonical: the pages that read ClickHouse (a
// comparison, a listing's reviews), the events' and the listings' pages key their
// answers by their query as read: unknown parameters and other spellings
// of one query (a reviews cursor with its JSON written otherwise) are the
// same answer, with the same ETag and no read of their own, and the
// page's links are written from the query as read, never as sent.
func TestPageCacheKeysAreCanonical(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) { c.PageRate = 0 })
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	a, b := firstLive(t, h, views.Chrome), firstLive(t, h, views.Firefox)
	f := firstLive(t, h, views.Firefox)
	lp := "/listings/firefox/" + url.PathEscape(f.ID)
	cursor := func(extra string) string {
		return base64.RawURLEncoding.EncodeToString([]byte(`{"q":"all\u0000",` + extra + `"p":1,"t":1772323200,"i":"zz"}`))
	}
	next := getOK[struct{ NextCursor string }](t, h.Base+"/api/v1/listings?store=chrome&limit=5").NextCursor
	issued, err := base64.RawURLEncoding.DecodeString(next)
	if err != nil || len(issued) < 2 || issued[0] != '{' {
		t.Fatalf("nextCursor %q: %v", next, err)
	}
	listCursor := func(i int) string { // the cursor issued, its JSON with i fields more
		return base64.RawURLEncoding.EncodeToString([]byte("{" + strings.Repeat(`"zz":0,`, i) + string(issued[1:])))
	}
	compare := "/compare?listings=" + url.QueryEscape("chrome:"+a.ID+",firefox:"+b.ID) + "&days=30"
	for _, c := range []struct {
		name     string
		spelling func(i int) string
	}{
		{"a comparison", func(i int) string { return compare + "&junk=" + strconv.Itoa(i) }},
		{"a listing's reviews", func(i int) string { return lp + "/reviews?stars=all&junk=" + strconv.Itoa(i) }},
		{"a listing's reviews from a cursor", func(i int) string {
			return lp + "/reviews?cursor=" + cursor(strings.Repeat(`"z":0,`, i))
		}},
		{"the reviews' feed", func(i int) string { return lp + "/reviews.atom?junk=" + strconv.Itoa(i) }},
		{"the events' page", func(i int) string {
			return "/events?kind=" + []string{"version,permissions", "permissions,version", "version,permissions,version"}[i%3] + "&junk=" + strconv.Itoa(i)
		}},
		{"the listings' page from a cursor", func(i int) string { return "/listings?store=chrome&limit=5&cursor=" + listCursor(i) }},
		{"the API's listings from a cursor", func(i int) string { return "/api/v1/listings?store=chrome&limit=5&cursor=" + listCursor(i) }},
		{"the listings' page", func(i int) string { return "/listings?store=chrome&sort=rating&junk=" + strconv.Itoa(i) }},
		{"a search", func(i int) string { return "/listings?q=" + url.QueryEscape(strings.Repeat(" ", i)+a.Name[:2]) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			ask(t, h, c.spelling(0), "text/html") // a page of the long tail is kept on its second ask
			first := ask(t, h, c.spelling(0), "text/html")
			if first.status != 200 || first.header.Get("ETag") == "" {
				t.Fatalf("%s: %d %q %.300s", c.spelling(0), first.status, first.header.Get("ETag"), first.body)
			}
			_, before := cacheCounts(t, h)
			for i := 1; i <= 5; i++ {
				next := ask(t, h, c.spelling(i), "text/html")
				if next.status != 200 || next.header.Get("ETag") != first.header.Get("ETag") {
					t.Fatalf("%s: %d, ETag %s, want %s as for %s", c.spelling(i), next.status, next.header.Get("ETag"), first.header.Get("ETag"), c.spelling(0))
				}
				for _, sent := range []string{"junk=", "z%22", "%22z", "+" + a.Name[:2]} {
					if strings.Contains(string(next.body), sent) {
						t.Errorf("%s: the page links its query as sent (%s)", c.spelling(i), sent)
					}
				}
			}
			if _, after := cacheCounts(t, h); after != before {
				t.Errorf("5 spellings of one answer made %d misses, want none", after-before)
			}
		})
	}
}

// TestPageReadsWaitTheirTurn: the reads of ClickHouse a page or its API
// twin makes on a miss (a comparison, a listing's reviews, a listing's
// page, the API's history, growth between dates or instants, and review
// search) wait for a turn of the miss gate as every query of the long
// tail does: with every turn held they are refused (503, Retry-After: 1),
// and answered once a turn is free.
func TestPageReadsWaitTheirTurn(t *testing.T) {
	h := start(t, seeded(t), func(c *edge.Config) {
		c.PageRate = 0
		c.Misses = missgate.Config{Share: 0.0001, Burst: time.Minute, Wait: 20 * time.Millisecond, Queue: 4}
	})
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	a, b := firstLive(t, h, views.Chrome), firstLive(t, h, views.Firefox)
	lp := "/listings/firefox/" + url.PathEscape(b.ID)
	pair := url.QueryEscape("chrome:" + a.ID + ",firefox:" + b.ID)
	newest := views.DayOf(h.State.Load().Replica.Info().ReadingsMark)
	instant := url.QueryEscape(time.Unix(b.ReadAt, 0).UTC().Add(-36 * time.Hour).Format(time.RFC3339))
	paths := []string{"/compare?listings=" + pair, "/api/v1/compare?listings=" + pair, lp + "/reviews", "/api/v1" + lp + "/reviews", lp,
		"/api/v1" + lp + "/history", "/api/v1" + lp + "/history.csv?days=30", "/api/v1" + lp + "/growth?from=" + (newest - 5).String(),
		"/api/v1" + lp + "/growth?from=" + instant, "/api/v1/reviews/search?q=slow&stars=all"}
	var held []func()
	for {
		leave, err := h.Server.MissGate().Enter(missgate.Caller{Key: "holder"})
		if err != nil {
			break
		}
		held = append(held, leave)
	}
	if len(held) == 0 {
		t.Fatal("no turn to hold")
	}
	for _, p := range paths {
		if got := ask(t, h, p, pageAccept(p)); got.status != 503 || got.header.Get("Retry-After") != "1" {
			t.Errorf("%s with every turn held: %d, Retry-After %q, want 503 and 1", p, got.status, got.header.Get("Retry-After"))
		}
	}
	for _, leave := range held {
		leave()
	}
	for _, p := range paths {
		if got := ask(t, h, p, pageAccept(p)); got.status != 200 {
			t.Errorf("%s with the turns free: %d %.200s", p, got.status, got.body)
		}
	}
}

// pageAccept is the Accept of a page's path (text/html), "" for another
// (its API's default).
func pageAccept(path string) string {
	if strings.HasPrefix(path, "/api/") && !strings.Contains(path, "/compare") {
		return ""
	}
	return "text/html"
}
