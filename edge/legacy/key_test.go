package legacy

import (
	"testing"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/answer/querykey"
	"github.com/edge-stats/edge/views/listq"
)

// TestLegacyCacheKey checks that queries asking for the same answer share
// a cache key and that every other query has a key of its own, including
// an optional flag set to false against the flag left unset, and that a
// q of only spaces is refused.
func TestLegacyCacheKey(t *testing.T) {
	app := fiber.New()
	key := func(query string) string {
		t.Helper()
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI("/api/extensions?" + query)
		c := app.AcquireCtx(&rc)
		defer app.ReleaseCtx(c)
		var q listq.Query
		if err := parseLegacy(c, &q, true); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return querykey.List(answer.NewKey(nil, "/api/extensions", 7), &q).String()
	}
	same := [][]string{
		{"", "page=1", "pageSize=50", "dir=desc", "q=", "includeDelisted=false", "hostAccess=some", "unknown=1"},
		{"featured=true", "featured=1"},
		{"platform=0&sort=rating", "sort=rating&platform=0"},
		{"q=ad", "q=%20ad%20"},
		{"pageSize=200", "pageSize=5000"},
	}
	distinct := []string{"", "featured=true", "featured=false", "rated=yes", "rated=no", "platform=0&sort=rating",
		"q=ad", "q=ads", "category=Tools", "category=Tool", "platform=0", "platform=1", "type=0", "type=1",
		"minInstalls=10", "maxInstalls=10", "minRating=4", "maxRating=4", "minRatingCount=3", "maxRatingCount=3",
		"minVersion=1.2", "maxVersion=1.2", "updatedAfter=2026-01-01", "updatedBefore=2026-01-01",
		"firstSeenAfter=2026-01-01", "firstSeenBefore=2026-01-01", "delistedAfter=2026-01-01", "delistedBefore=2026-01-01",
		"includeDelisted=true", "delistedOnly=true", "manifestVersion=2", "manifestVersion=3", "permission=tabs",
		"hostAccess=all", "minAccessLevel=2", "dir=asc", "page=2", "pageSize=200", "pageSize=20", "sort=name",
		`q=a"b`, `q=a&category=b`, `q=a%26c%3Db`}
	for _, group := range same {
		for _, q := range group[1:] {
			if key(q) != key(group[0]) {
				t.Errorf("%q and %q ask for the same answer but have the keys %q and %q", group[0], q, key(group[0]), key(q))
			}
		}
	}
	for _, q := range []string{"q=%20%20", "q=%20", "q=%09"} { // only spaces: refused, not every listing
		var rc fasthttp.RequestCtx
		rc.Request.SetRequestURI("/api/extensions?" + q)
		c := app.AcquireCtx(&rc)
		var lq listq.Query
		if err := parseLegacy(c, &lq, true); err == nil {
			t.Errorf("%s is read as a query, want a 400", q)
		}
		app.ReleaseCtx(c)
	}
	seen := map[string]string{}
	for _, q := range distinct {
		k := key(q)
		if other, ok := seen[k]; ok {
			t.Errorf("%q and %q share the key %q", other, q, k)
		}
		seen[k] = q
	}
}

// FuzzLegacyQuery: no query string makes the legacy query's parser panic;
// a query it accepts is within the API's bounds, and parses to the same
// cache key however often it is read.
func FuzzLegacyQuery(f *testing.F) {
	for _, q := range []string{"", "platform=0&sort=rating&dir=asc", "pageSize=5000&page=0", "page=99999999999999999999",
		"minRating=NaN&maxRating=Inf", "minVersion=1.2.3&maxVersion=v2", "updatedAfter=2026-13-45", "type=9&manifestVersion=1",
		"featured=maybe", "q=%00%ff&category=%E2%80%AE", "minInstalls=-1e400", "platform=0&platform=4&platform=5"} {
		f.Add(q)
	}
	app := fiber.New()
	f.Fuzz(func(t *testing.T, raw string) {
		parse := func() (listq.Query, error) {
			var rc fasthttp.RequestCtx
			rc.Request.SetRequestURI("/api/extensions?" + raw)
			c := app.AcquireCtx(&rc)
			defer app.ReleaseCtx(c)
			var q listq.Query
			return q, parseLegacy(c, &q, true)
		}
		q, err := parse()
		if err != nil {
			return
		}
		if q.Page < 1 || q.PageSize < 1 || q.PageSize > maxPageSize {
			t.Fatalf("%q: paging out of bounds: page %d, pageSize %d", raw, q.Page, q.PageSize)
		}
		if q.Store != nil && !q.Store.Valid() {
			t.Fatalf("%q: an unknown store", raw)
		}
		again, _ := parse()
		if a, b := querykey.List(answer.NewKey(nil, "/api/extensions", 1), &q).String(), querykey.List(answer.NewKey(nil, "/api/extensions", 1), &again).String(); a != b {
			t.Fatalf("%q: two keys for one query:\n%q\n%q", raw, a, b)
		}
	})
}
