package edge_test

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/edge"
	"github.com/edge-stats/edge/edge/clientip"
	"github.com/edge-stats/edge/internal/csvw"
	"github.com/edge-stats/edge/views"
)

// legacyHarness is a server with figures built over a seeded database, and
// a connection for expectations by direct SQL.
func legacyHarness(t *testing.T, opts ...func(*edge.Config)) (*harness, func(string) uint64) {
	t.Helper()
	cfg := seededN(t, 1500) // more than the CSV's 1,000 rows
	h := start(t, cfg, opts...)
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	conn, err := analytics.Open(context.Background(), *cfg.CH)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	// count runs a condition over live listings, chosen independently of the
	// code under test: newest version and newest reading by LIMIT 1 BY.
	count := func(cond string) uint64 {
		t.Helper()
		var n uint64
		q := `SELECT count() FROM (
			SELECT * FROM listings ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id
		) ANY INNER JOIN (
			SELECT store, id, usage, rating, rating_count FROM snapshots ORDER BY store, id, crawled_at DESC LIMIT 1 BY store, id
		) USING (store, id) WHERE isNull(delisted_at) AND (` + cond + `)`
		if err := conn.QueryRow(context.Background(), q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", cond, err)
		}
		return n
	}
	return h, count
}

// legacyEdge is a server with figures built over the 1,500-listing test
// dataset in memory, for the tests that need no SQL oracle.
func legacyEdge(t *testing.T, opts ...func(*edge.Config)) *harness {
	t.Helper()
	h := start(t, syntheticN(t, 1500), opts...) // more than the CSV's 1,000 rows
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	return h
}

type legacyAnswer struct {
	Total, Page, PageSize int
	Rows                  []map[string]any
}

func getLegacy(t *testing.T, h *harness, query string) legacyAnswer {
	t.Helper()
	return getOK[legacyAnswer](t, h.Base+"/api/extensions?"+query)
}

var rowFields = strings.Fields(`id s n d c t p i wd cd r rc v u fs du al ic f ds sp g1 g7 g30 g365 g1p g7p g30p
	g365p g1b g7b g30b g365b rg1 rg7 rg1p rg7p rg1b rg7b lc`)

func TestLegacyDefaultsAndShape(t *testing.T) {
	h, count := legacyHarness(t)
	page := getLegacy(t, h, "")
	if live := count("1"); page.Total != int(live) || page.Page != 1 || page.PageSize != 50 || len(page.Rows) != 50 {
		t.Fatalf("default page: total %d (live %d), page %d, size %d, rows %d", page.Total, live, page.Page, page.PageSize, len(page.Rows))
	}
	prev := int64(1 << 62)
	nulls := false
	for _, r := range page.Rows {
		keys := make([]string, 0, len(r))
		for k := range r {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		want := slices.Sorted(slices.Values(rowFields))
		if !slices.Equal(keys, want) {
			t.Fatalf("row keys %v, want %v", keys, want)
		}
		if r["i"] == nil {
			nulls = true
			continue
		}
		if nulls {
			t.Fatal("a usage figure after a null: nulls must sort last")
		}
		if i := int64(r["i"].(float64)); i > prev {
			t.Fatalf("not largest usage first: %d after %d", i, prev)
		} else {
			prev = i
		}
	}
}

func TestLegacyFiltersAgainstSQL(t *testing.T) {
	h, count := legacyHarness(t)
	day := "2026-02-20"
	for _, c := range []struct {
		query, sql string
	}{
		{"platform=2", "store = 2"},
		{"platform=3&minInstalls=1", "0"}, // apple has no usage figure
		{"minInstalls=100&maxInstalls=5000", "isNotNull(usage) AND usage >= 100 AND usage <= 5000"},
		{"rated=yes", "isNotNull(rating)"},
		{"rated=no", "isNull(rating)"},
		{"minRating=4&maxRating=4.5", "isNotNull(rating) AND round(rating, 2) >= 4 AND round(rating, 2) <= 4.5"},
		{"minRatingCount=20", "isNotNull(rating) AND rating_count >= 20"},
		{"type=2", "kind = 2"},
		{"featured=true", "featured = 1"},
		{"manifestVersion=2", "manifest_version = 2"},
		{"permission=tabs", "has(permissions, 'tabs')"},
		{"permission=Tabs", "0"}, // case-sensitive
		{"minAccessLevel=3", "access_level >= 3"},
		{"hostAccess=somethingelse", "1"}, // other values are ignored
		{"updatedAfter=" + day, "isNotNull(store_updated) AND store_updated >= toDate('" + day + "')"},
		{"updatedBefore=" + day + "&updatedAfter=" + day, "store_updated = toDate('" + day + "')"},
		{"firstSeenAfter=2026-02-20&firstSeenBefore=2026-02-20", "toDate(first_seen, 'UTC') = toDate('2026-02-20')"},
		{"category=Tools&platform=0", "store = 0 AND category = 'Tools'"},
	} {
		got := getLegacy(t, h, c.query)
		if want := count(c.sql); uint64(got.Total) != want {
			t.Errorf("?%s: total %d, SQL %d", c.query, got.Total, want)
		}
	}
	// Delisted combinations.
	inc := getLegacy(t, h, "includeDelisted=true")
	only := getLegacy(t, h, "delistedOnly=true")
	live := getLegacy(t, h, "")
	if inc.Total != live.Total+only.Total || only.Total == 0 {
		t.Errorf("includeDelisted %d != live %d + delistedOnly %d", inc.Total, live.Total, only.Total)
	}
	for _, r := range only.Rows {
		if r["du"] == nil {
			t.Fatal("delistedOnly returned a live listing")
		}
	}
	if after := getLegacy(t, h, "delistedAfter=2000-01-01"); after.Total != only.Total {
		t.Errorf("delistedAfter implies delisted only: %d, want %d", after.Total, only.Total)
	}
	// A growth sort lists only listings with the figure.
	if g := getLegacy(t, h, "sort=growth7d&pageSize=200"); g.Total == 0 || g.Total >= live.Total {
		t.Errorf("growth7d sort lists %d of %d", g.Total, live.Total)
	} else {
		for _, r := range g.Rows {
			if r["g7"] == nil {
				t.Fatal("growth sort row without the figure")
			}
		}
	}
	// Unknown sort means installs.
	a, b := get(t, "GET", h.Base+"/api/extensions?sort=bogus"), get(t, "GET", h.Base+"/api/extensions")
	if !bytes.Equal(a.body, b.body) {
		t.Error("an unknown sort differs from installs")
	}
	// Ascending name sort is A to Z, nulls last either way.
	names := getLegacy(t, h, "sort=name&dir=asc&pageSize=200")
	for i := 1; i < len(names.Rows); i++ {
		if names.Rows[i-1]["n"].(string) > names.Rows[i]["n"].(string) {
			t.Fatalf("name asc out of order at %d", i)
		}
	}
	ratings := getLegacy(t, h, "sort=rating&dir=asc&pageSize=200&page=1")
	if ratings.Rows[0]["r"] == nil {
		t.Error("ascending rating sort starts with a null")
	}
}

func TestLegacyPagingAndErrors(t *testing.T) {
	h := legacyEdge(t)
	if p := getLegacy(t, h, "pageSize=201"); p.PageSize != 200 || len(p.Rows) != 200 {
		t.Errorf("pageSize 201: %d rows of %d", len(p.Rows), p.PageSize)
	}
	all := getLegacy(t, h, "pageSize=200")
	last := (all.Total + 199) / 200
	if p := getLegacy(t, h, fmt.Sprintf("pageSize=200&page=%d", last+1)); len(p.Rows) != 0 || p.Total != all.Total {
		t.Errorf("beyond the last page: %d rows, total %d", len(p.Rows), p.Total)
	}
	p1, p2 := getLegacy(t, h, "pageSize=7&page=1"), getLegacy(t, h, "pageSize=7&page=2")
	if p1.Rows[6]["id"] == p2.Rows[0]["id"] || p1.Total != p2.Total {
		t.Error("pages overlap")
	}
	for query, param := range map[string]string{
		"page=0": "page", "page=-1": "page", "pageSize=0": "pageSize", "minRating=abc": "minRating",
		"maxRating=6": "maxRating", "updatedAfter=2026-13-01": "updatedAfter", "platform=5": "platform",
		"rated=maybe": "rated", "manifestVersion=4": "manifestVersion", "dir=up": "dir",
		"minInstalls=lots": "minInstalls", "minVersion=v1.2": "minVersion", "featured=yes": "featured",
		"firstSeenBefore=yesterday": "firstSeenBefore", "minAccessLevel=0": "minAccessLevel",
	} {
		d := problem(t, get(t, "GET", h.Base+"/api/extensions?"+query), http.StatusBadRequest)
		if !strings.HasPrefix(d, param+":") {
			t.Errorf("?%s: detail %q does not name %s", query, d, param)
		}
	}
	problem(t, get(t, "GET", h.Base+"/api/categories?platform=9"), http.StatusBadRequest)
}

func TestLegacyCSV(t *testing.T) {
	h := legacyEdge(t)
	a := get(t, "GET", h.Base+"/api/extensions.csv?platform=2&sort=name&dir=asc")
	if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/csv") ||
		!strings.Contains(a.header.Get("Content-Disposition"), `filename="extensions-firefox-`) {
		t.Fatalf("csv: %d %v", a.status, a.header)
	}
	if !bytes.HasPrefix(a.body, []byte("\xef\xbb\xbf")) {
		t.Fatal("no byte-order mark")
	}
	recs, err := csv.NewReader(bytes.NewReader(a.body[3:])).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	header := strings.Split("platform,id,name,developer,category,type,usage,weekly_downloads,rating,rating_count,version,updated,store_created,first_seen,delisted,featured,access_level,growth_1d,growth_1d_pct,growth_7d,growth_7d_pct,ratings_growth_1d,ratings_growth_1d_pct,ratings_growth_7d,ratings_growth_7d_pct,url", ",")
	if !slices.Equal(recs[0], header) {
		t.Fatalf("header %v", recs[0])
	}
	json := getLegacy(t, h, "platform=2&sort=name&dir=asc&pageSize=200")
	if len(recs)-1 != min(json.Total, 1000) {
		t.Fatalf("%d csv rows, total %d", len(recs)-1, json.Total)
	}
	for i, r := range json.Rows {
		rec := recs[i+1]
		if rec[0] != "firefox" || rec[1] != r["id"] || rec[2] != csvw.Text(r["n"].(string)) || (rec[15] != "yes" && rec[15] != "no") ||
			!strings.HasSuffix(rec[25], "/listings/firefox/"+rec[1]) {
			t.Fatalf("csv row %d %v differs from json %v", i, rec, r)
		}
	}
	// Quoting survives commas, quotes, newlines and non-Latin text.
	all := get(t, "GET", h.Base+"/api/extensions.csv?includeDelisted=true&sort=name")
	recs, err = csv.NewReader(bytes.NewReader(all.body[3:])).ReadAll()
	if err != nil {
		t.Fatalf("csv with awkward names: %v", err)
	}
	if total := getLegacy(t, h, "includeDelisted=true").Total; total <= 1000 || len(recs) != 1001 {
		t.Errorf("%d csv rows of %d, want the first 1,000", len(recs)-1, total)
	}
	// CSV injection: names that a spreadsheet would run as formulas (the
	// seeder makes some; by name, A to Z, they come first) start with an
	// apostrophe, in every text cell; numbers, negative ones included, stay
	// numbers.
	asc := get(t, "GET", h.Base+"/api/extensions.csv?includeDelisted=true&sort=name&dir=asc")
	if recs, err = csv.NewReader(bytes.NewReader(asc.body[3:])).ReadAll(); err != nil {
		t.Fatal(err)
	}
	formulas := 0
	for _, rec := range recs[1:] {
		for _, col := range []int{1, 2, 3, 4, 10} {
			if c := rec[col]; c != "" && strings.ContainsRune("=+-@\t\r", rune(c[0])) {
				t.Errorf("cell %q of column %s runs as a formula", c, recs[0][col])
			}
		}
		if strings.HasPrefix(rec[2], "'") {
			formulas++
		}
	}
	if formulas == 0 {
		t.Error("no formula-looking name in the CSV: the seeder no longer makes them, and this test proves nothing")
	}
}

func TestLegacyCaching(t *testing.T) {
	h := legacyEdge(t)
	for _, path := range []string{"/api/extensions?platform=1", "/api/extensions.csv", "/api/summary", "/api/categories", "/api/categories?platform=2", "/api/permissions"} {
		a := get(t, "GET", h.Base+path)
		etag := a.header.Get("ETag")
		if a.status != 200 || !strings.HasPrefix(etag, `W/"`) || a.header.Get("Cache-Control") != "public, max-age=60, stale-while-revalidate=300, stale-if-error=86400" {
			t.Fatalf("%s: %d etag %q cache %q", path, a.status, etag, a.header.Get("Cache-Control"))
		}
		for _, inm := range []string{etag, strings.TrimPrefix(etag, "W/"), `"nope", ` + etag, "*"} {
			req, _ := http.NewRequest("GET", h.Base+path, nil)
			req.Header.Set("If-None-Match", inm)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 304 || resp.Header.Get("ETag") != etag || resp.Header.Get("Cache-Control") == "" {
				t.Errorf("%s If-None-Match %s: %d", path, inm, resp.StatusCode)
			}
		}
		req, _ := http.NewRequest("GET", h.Base+path, nil)
		req.Header.Set("If-None-Match", `W/"other"`)
		if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 200 {
			t.Errorf("%s with another ETag: %v", path, resp.StatusCode)
		}
	}
	var sum map[string]any
	json.Unmarshal(get(t, "GET", h.Base+"/api/summary").body, &sum)
	for _, k := range []string{"known", "crawled", "delisted", "live", "rated", "noVersionKey", "snapshots", "pending", "platforms", "buckets", "cats", "years"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary lacks %s", k)
		}
	}
	var perms []map[string]any
	json.Unmarshal(get(t, "GET", h.Base+"/api/permissions").body, &perms)
	if len(perms) == 0 || perms[0]["permission"] == nil || perms[0]["count"] == nil {
		t.Errorf("permissions %v", perms)
	}
}

func TestLegacyFairUse(t *testing.T) {
	trusted, _ := clientip.ParsePrefixes("127.0.0.1")
	exempt, _ := clientip.ParsePrefixes("203.0.113.0/24")
	h := legacyEdge(t, func(c *edge.Config) {
		c.FairUseRate, c.FairUseBurst, c.TrustedProxies, c.FairUseExempt = 0.01, 3, trusted, exempt
	})
	from := func(xff string) int {
		req, _ := http.NewRequest("GET", h.Base+"/api/summary", nil)
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == 429 && (resp.Header.Get("Retry-After") == "" || resp.Header.Get("Content-Type") != "application/problem+json") {
			t.Error("429 without Retry-After or problem+json")
		}
		return resp.StatusCode
	}
	for i := 0; i < 3; i++ {
		if s := from("198.51.100.7"); s != 200 {
			t.Fatalf("request %d within the burst: %d", i, s)
		}
	}
	if s := from("198.51.100.7"); s != 429 {
		t.Fatalf("past the burst: %d", s)
	}
	if s := from("198.51.100.8"); s != 200 {
		t.Errorf("another address is limited too: %d", s)
	}
	// The client is the first untrusted hop from the right.
	if s := from("198.51.100.7, 198.51.100.9"); s != 200 {
		t.Errorf("right-most untrusted hop should be 198.51.100.9: %d", s)
	}
	for i := 0; i < 10; i++ {
		if s := from("203.0.113.5"); s != 200 {
			t.Fatalf("exempt CDN address limited: %d", s)
		}
	}
	// The v1 API is not under the legacy fair use.
	if a := get(t, "GET", h.Base+"/api/v1/categories/chrome"); a.status != 200 {
		t.Errorf("v1 limited by legacy fair use: %d", a.status)
	}
}

// TestLegacyTextSearchPoolAndBudget: a legacy text search takes a slot of
// the search pool shared with /api/v1 (429 with Retry-After: 5 when it is
// used up), runs under the text budget (past it, 503 that says to narrow
// q, never cached), and a search answered before comes from the cache
// without the pool.
func TestLegacyTextSearchPoolAndBudget(t *testing.T) {
	h := legacyEdge(t, func(c *edge.Config) { c.Limits.SearchSlots, c.Limits.SearchRate = 1, 0.0001 })
	if a := get(t, "GET", h.Base+"/api/extensions?q=ab"); a.status != 200 {
		t.Fatalf("first search: %d %s", a.status, a.body)
	}
	h.Server.WaitAnswers() // the cache keeps answers asynchronously
	for _, path := range []string{"/api/extensions?q=cd", "/api/extensions.csv?q=cd", "/api/v1/listings?q=cd"} {
		a := get(t, "GET", h.Base+path)
		problem(t, a, http.StatusTooManyRequests)
		if a.header.Get("Retry-After") != "5" {
			t.Errorf("%s: Retry-After %q", path, a.header.Get("Retry-After"))
		}
	}
	if a := get(t, "GET", h.Base+"/api/extensions?q=ab"); a.status != 200 {
		t.Fatalf("a search answered before: %d, want it from the cache", a.status)
	}
	slow := legacyEdge(t, func(c *edge.Config) { c.TextBudget = time.Nanosecond })
	for range 2 {
		a := get(t, "GET", slow.Base+"/api/extensions?q=translator")
		if d := problem(t, a, http.StatusServiceUnavailable); !strings.HasPrefix(d, "q: ") || a.header.Get("Retry-After") != "5" {
			t.Fatalf("past the budget: %q, Retry-After %q", d, a.header.Get("Retry-After"))
		}
	}
}

// TestLegacyPercentSortsKeepTheFloor checks that the legacy percent sort
// ranks only listings of at least the floor (1,000 users), as v1's
// growthpct7d does: both APIs give the same fastest-growing listings, in
// the same order.
func TestLegacyPercentSortsKeepTheFloor(t *testing.T) {
	h := legacyEdge(t)
	page := getLegacy(t, h, "platform=0&sort=growthpct7d&pageSize=100")
	if len(page.Rows) == 0 {
		t.Fatal("no chrome listing ranked by growthpct7d")
	}
	v1 := getList(t, h, "store=chrome&sort=growthpct7d&limit=100")
	for i, r := range page.Rows {
		if users, _ := r["i"].(float64); users < float64(views.RisingMinSize(views.Chrome)) {
			t.Errorf("row %d (%v) has %v users, under the floor", i, r["id"], r["i"])
		}
		if i < len(v1.Listings) && v1.Listings[i].ID != r["id"] {
			t.Errorf("row %d: legacy %v, v1 %s", i, r["id"], v1.Listings[i].ID)
		}
	}
}
