package edge_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
)

// v1Count is how many listings /api/v1/listings lists for query: the rows
// of its NDJSON file (up to 10,000, more than the test data holds).
func v1Count(t *testing.T, h *harness, query string) uint64 {
	t.Helper()
	a := get(t, "GET", h.Base+"/api/v1/listings?format=ndjson&limit=10000&"+query)
	if a.status != http.StatusOK {
		t.Fatalf("?%s: %d %s", query, a.status, a.body)
	}
	return uint64(bytes.Count(a.body, []byte("\n")))
}

// TestV1FiltersAgainstSQL checks every filter /api/v1/listings shares
// with the legacy API, and kind and hostAccess, against a count of the
// listings in ClickHouse written apart from the edge's code, and each
// refusal of a value it cannot read.
func TestV1FiltersAgainstSQL(t *testing.T) {
	h, count := legacyHarness(t)
	day := "2026-02-20"
	for _, c := range []struct{ query, sql string }{
		{"store=firefox", "store = 2"},
		{"minRating=4&maxRating=4.5", "isNotNull(rating) AND round(rating, 2) >= 4 AND round(rating, 2) <= 4.5"},
		{"minRatingCount=20&maxRatingCount=5000", "isNotNull(rating) AND rating_count >= 20 AND rating_count <= 5000"},
		{"kind=theme", "kind = 2"},
		{"kind=app&store=apple", "kind = 3 AND store = 3"},
		{"featured=true", "featured = 1"},
		{"featured=false&store=chrome", "featured = 0 AND store = 0"},
		{"manifestVersion=2", "manifest_version = 2"},
		{"permission=tabs", "has(permissions, 'tabs')"},
		{"minAccessLevel=3", "access_level >= 3"},
		{"hostAccess=all", "arrayExists(h -> h IN ('<all_urls>', '*://*/*', 'http://*/*', 'https://*/*', '*://*', 'http://*/', 'https://*/'), host_access) OR has(permissions, '<all_urls>')"},
		{"updatedAfter=" + day, "isNotNull(store_updated) AND store_updated >= toDate('" + day + "')"},
		{"updatedBefore=" + day + "&updatedAfter=" + day, "store_updated = toDate('" + day + "')"},
		{"firstSeenAfter=2026-02-20&firstSeenBefore=2026-02-20", "toDate(first_seen, 'UTC') = toDate('2026-02-20')"},
		{"store=chrome&permission=tabs&minRating=3", "store = 0 AND has(permissions, 'tabs') AND isNotNull(rating) AND round(rating, 2) >= 3"},
	} {
		if got, want := v1Count(t, h, c.query), count(c.sql); got != want {
			t.Errorf("?%s: %d listings, SQL counts %d", c.query, got, want)
		}
		if want := count(c.sql); want == 0 && !strings.Contains(c.query, "2026-02-20") {
			t.Errorf("?%s: the test data has no listing it keeps: the comparison says nothing", c.query)
		}
	}
	// Delisted listings: included, only, and by date (which means only).
	live, inc, only := v1Count(t, h, ""), v1Count(t, h, "includeDelisted=true"), v1Count(t, h, "delistedOnly=true")
	if only == 0 || inc != live+only {
		t.Errorf("includeDelisted %d, want live %d + delistedOnly %d (> 0)", inc, live, only)
	}
	if after := v1Count(t, h, "delistedAfter=2000-01-01"); after != only {
		t.Errorf("delistedAfter lists %d, want the %d delisted", after, only)
	}
	for _, l := range getOK[struct{ Listings []struct{ Live bool } }](t, h.Base+"/api/v1/listings?delistedOnly=true&limit=100").Listings {
		if l.Live {
			t.Fatal("delistedOnly listed a live listing")
		}
	}
	// A value that cannot be read is a 400 naming its parameter; the
	// legacy API ignores an unknown hostAccess, the v1 API does not.
	for query, param := range map[string]string{
		"minRating=abc": "minRating", "maxRating=6": "maxRating", "minRatingCount=-1": "minRatingCount",
		"kind=plugin": "kind", "kind=2": "kind", "featured=yes": "featured", "manifestVersion=4": "manifestVersion",
		"minAccessLevel=9": "minAccessLevel", "hostAccess=some": "hostAccess", "updatedAfter=2026-13-01": "updatedAfter",
		"firstSeenBefore=yesterday": "firstSeenBefore", "delistedOnly=maybe": "delistedOnly", "minVersion=beta": "minVersion",
	} {
		if d := problem(t, get(t, "GET", h.Base+"/api/v1/listings?"+query), http.StatusBadRequest); !strings.HasPrefix(d, param+":") {
			t.Errorf("?%s: detail %q does not start with %s:", query, d, param)
		}
	}
	// The filters are part of the query a cursor is issued for.
	first := getOK[struct{ NextCursor *string }](t, h.Base+"/api/v1/listings?store=chrome&permission=tabs&limit=2")
	if first.NextCursor == nil {
		t.Fatal("no second page of chrome listings asking for tabs")
	}
	problem(t, get(t, "GET", h.Base+"/api/v1/listings?store=chrome&limit=2&cursor="+*first.NextCursor), http.StatusBadRequest)
}
