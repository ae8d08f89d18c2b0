package edge_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// listRoute is a list read served as files: its API address and its
// page's, the JSON member holding its elements, the first cells of its
// CSV header, and an element's identity as its JSON and its CSV row
// give it (the same for the same element).
type listRoute struct {
	name, api, page string
	member          string
	header          []string
	fromJSON        func(t *testing.T, raw json.RawMessage) string
	fromRow         func(row []string) string
}

// jsonField is field of a JSON object, as text.
func jsonField(t *testing.T, raw json.RawMessage, path ...string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s: no object at %s", raw, p)
		}
		v = m[p]
	}
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	t.Fatalf("%s: %v at %v is no string or number", raw, v, path)
	return ""
}

// TestFigureListsAsFiles: the figures' lists (a store's categories, a
// chart, the topics, a topic's listings) answer as CSV and NDJSON, by
// format= or by Accept, on the API's address and on the page's, with the
// JSON's elements in its order; NDJSON lines are the JSON's elements byte
// for byte; an unknown format is a 400 naming the formats; the answers
// vary by Accept; the page's files are the API's, public as the page is.
func TestFigureListsAsFiles(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	// A topic with listings in chrome, for its listings' route.
	var tags struct {
		Tags []struct {
			Slug     string
			Listings map[string]int
		}
	}
	if a := get(t, "GET", h.Base+"/api/v1/tags"); a.status != 200 || json.Unmarshal(a.body, &tags) != nil {
		t.Fatalf("tags: %d %.200s", a.status, a.body)
	}
	slug := ""
	for _, tg := range tags.Tags {
		if tg.Listings["chrome"] > 1 {
			slug = tg.Slug
			break
		}
	}
	if slug == "" {
		t.Fatal("no topic has two chrome listings")
	}
	stores := []string{"chrome", "edge", "firefox", "apple", "googleplay"}
	routes := []listRoute{
		{name: "categories", api: "/api/v1/categories/chrome", page: "/categories/chrome", member: "categories",
			header: []string{"store", "name", "listings", "total_size", "growth_7d", "growth_30d"},
			fromJSON: func(t *testing.T, raw json.RawMessage) string {
				var c map[string]any
				if err := json.Unmarshal(raw, &c); err != nil {
					t.Fatal(err)
				}
				return "chrome " + jsonRaw(c["name"]) + " " + jsonRaw(c["listings"]) + " " + jsonRaw(c["totalSize"]) + " " + jsonRaw(c["growth7d"]) + " " + jsonRaw(c["growth30d"])
			},
			fromRow: func(r []string) string { return strings.Join(r, " ") }},
		{name: "chart", api: "/api/v1/charts/chrome?chart=top", page: "/charts/chrome?chart=top", member: "entries",
			header: []string{"position", "from", "to", "change", "percent", "climb", "store", "id"},
			fromJSON: func(t *testing.T, raw json.RawMessage) string {
				return jsonField(t, raw, "position") + " " + jsonField(t, raw, "listing", "id") + " " + jsonField(t, raw, "listing", "size")
			},
			fromRow: func(r []string) string { return r[0] + " " + r[7] + " " + r[11] }},
		{name: "trending chart", api: "/api/v1/charts/chrome?chart=trending", page: "/charts/chrome?chart=trending", member: "entries",
			header: []string{"position", "from", "to", "change"},
			fromJSON: func(t *testing.T, raw json.RawMessage) string {
				return jsonField(t, raw, "position") + " " + jsonField(t, raw, "change") + " " + jsonField(t, raw, "listing", "id")
			},
			fromRow: func(r []string) string { return r[0] + " " + r[3] + " " + r[7] }},
		{name: "tags", api: "/api/v1/tags", page: "/tags", member: "tags",
			header: append([]string{"slug"}, stores...),
			fromJSON: func(t *testing.T, raw json.RawMessage) string {
				id := jsonField(t, raw, "slug")
				for _, s := range stores {
					id += " " + jsonField(t, raw, "listings", s)
				}
				return id
			},
			fromRow: func(r []string) string { return strings.Join(r, " ") }},
		{name: "tag", api: "/api/v1/tags/" + url.PathEscape(slug) + "/chrome", page: "/tags/" + url.PathEscape(slug) + "/chrome", member: "listings",
			header: []string{"store", "id", "name", "developer"},
			fromJSON: func(t *testing.T, raw json.RawMessage) string {
				return jsonField(t, raw, "store") + " " + jsonField(t, raw, "id")
			},
			fromRow: func(r []string) string { return r[0] + " " + r[1] }},
	}
	with := func(u, q string) string {
		if strings.Contains(u, "?") {
			return u + "&" + q
		}
		return u + "?" + q
	}
	for _, rt := range routes {
		t.Run(rt.name, func(t *testing.T) {
			a := get(t, "GET", h.Base+rt.api)
			var doc map[string]json.RawMessage
			var elems []json.RawMessage
			if a.status != 200 || json.Unmarshal(a.body, &doc) != nil || json.Unmarshal(doc[rt.member], &elems) != nil {
				t.Fatalf("JSON: %d %.200s", a.status, a.body)
			}
			if len(elems) < 2 {
				t.Fatalf("the JSON lists %d elements: too few to tell an order", len(elems))
			}
			// CSV: a header, then the JSON's elements in its order.
			byFormat := get(t, "GET", h.Base+with(rt.api, "format=csv"))
			rows := csvRows(t, byFormat)
			if strings.Join(rows[0][:len(rt.header)], ",") != strings.Join(rt.header, ",") || len(rows) != len(elems)+1 {
				t.Fatalf("CSV header %v and %d rows, want %v and %d", rows[0], len(rows)-1, rt.header, len(elems))
			}
			for i, r := range rows[1:] {
				if got, want := rt.fromRow(r), rt.fromJSON(t, elems[i]); got != want {
					t.Fatalf("CSV row %d is %q, the JSON's %q", i, got, want)
				}
			}
			if d := byFormat.header.Get("Content-Disposition"); !strings.HasPrefix(d, `attachment; filename="`) || !strings.HasSuffix(d, `.csv"`) {
				t.Errorf("Content-Disposition %q", d)
			}
			for _, v := range []string{byFormat.header.Get("Vary"), a.header.Get("Vary")} {
				if !strings.Contains(v, "Accept") {
					t.Errorf("Vary %q does not name Accept", v)
				}
			}
			// Accept chooses the same file; a browser's Accept gets the JSON.
			if b := getWith(t, h.Base+rt.api, "Accept", "text/csv"); !bytes.Equal(b.body, byFormat.body) || b.header.Get("ETag") != byFormat.header.Get("ETag") {
				t.Errorf("Accept: text/csv answered %.100q", b.body)
			}
			if b := getWith(t, h.Base+rt.api, "Accept", "text/html,application/xhtml+xml,*/*;q=0.8"); !bytes.Equal(b.body, a.body) {
				t.Errorf("a browser's Accept got %s %.100q", b.header.Get("Content-Type"), b.body)
			}

			// NDJSON: each line is the JSON's element, byte for byte.
			nd := get(t, "GET", h.Base+with(rt.api, "format=ndjson"))
			if nd.status != 200 || nd.header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("NDJSON: %d %s", nd.status, nd.header.Get("Content-Type"))
			}
			lines := strings.Split(strings.TrimSuffix(string(nd.body), "\n"), "\n")
			if len(lines) != len(elems) {
				t.Fatalf("NDJSON has %d lines, the JSON %d elements", len(lines), len(elems))
			}
			for i, line := range lines {
				if line != string(elems[i]) {
					t.Fatalf("NDJSON line %d differs from the JSON's element:\n%s\n%s", i, line, elems[i])
				}
			}
			if b := getWith(t, h.Base+rt.api, "Accept", "application/x-ndjson"); !bytes.Equal(b.body, nd.body) {
				t.Errorf("Accept: application/x-ndjson answered %.100q", b.body)
			}

			// An unknown format is a 400 naming those there are.
			for _, u := range []string{rt.api, rt.page} {
				if b := get(t, "GET", h.Base+with(u, "format=xlsx")); b.status != 400 || !bytes.Contains(b.body, []byte("csv, ndjson")) {
					t.Errorf("%s format=xlsx: %d %.200s", u, b.status, b.body)
				}
			}

			// The page is HTML, and offers the same files, public as it is.
			if p := get(t, "GET", h.Base+rt.page); p.status != 200 || !strings.HasPrefix(p.header.Get("Content-Type"), "text/html") ||
				!strings.HasPrefix(p.header.Get("Cache-Control"), "public") {
				t.Errorf("page: %d %s %s", p.status, p.header.Get("Content-Type"), p.header.Get("Cache-Control"))
			}
			for _, f := range []struct {
				format string
				api    answer
			}{{"csv", byFormat}, {"ndjson", nd}} {
				p := get(t, "GET", h.Base+with(rt.page, "format="+f.format))
				if !bytes.Equal(p.body, f.api.body) || !strings.HasPrefix(p.header.Get("Cache-Control"), "public") {
					t.Errorf("the page's %s: %d %s %.100q", f.format, p.status, p.header.Get("Cache-Control"), p.body)
				}
			}
			if p := getWith(t, h.Base+rt.page, "Accept", "text/csv"); !bytes.Equal(p.body, byFormat.body) {
				t.Errorf("the page with Accept: text/csv answered %.100q", p.body)
			}
		})
	}

	// The store's statistics are no list: JSON, and the store's page.
	for _, u := range []string{"/api/v1/stores/chrome/stats", "/stores/chrome"} {
		if b := get(t, "GET", h.Base+u+"?format=csv"); b.status != 400 {
			t.Errorf("%s?format=csv: %d, want 400", u, b.status)
		}
	}
}
