package edge_test

import (
	"bytes"
	"encoding/json"
	"net/url"
	"strings"
	"testing"
)

// TestListReadsAsFiles: each list read of the editions and the change
// events (the weeks, the event feed, a listing's changes, the change
// feed) answers as CSV and NDJSON, by format= or by Accept, with the
// JSON answer's rows in its order (one row, and one line, an entry of
// its list); on its page's address too, public as the page is; a .csv
// address answers CSV whatever Accept says; an unknown format is a 400
// naming those there are.
func TestListReadsAsFiles(t *testing.T) {
	h := start(t, seeded(t))
	for _, job := range []string{"views", "editions"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(err)
		}
	}
	var newest struct{ Events []struct{ Store, ID string } }
	if a := get(t, "GET", h.Base+"/api/v1/events?limit=1"); json.Unmarshal(a.body, &newest) != nil || len(newest.Events) != 1 {
		t.Fatalf("the newest event: %d %.200s", a.status, a.body)
	}
	listing := newest.Events[0].Store + "/" + url.PathEscape(newest.Events[0].ID)

	for _, c := range []struct {
		name string
		// api is the JSON's address (with a query), page its page's
		// ("": none), csvRoute its .csv address ("": none).
		api, page, csvRoute string
		// list is the JSON's list field; header the CSV's first columns;
		// column the CSV column holding the entry's field.
		list, field string
		header      []string
		column      int
	}{
		{"weeks", "/api/v1/weeks?", "/weeks?", "", "weeks", "week", []string{"week", "start", "end"}, 0},
		{"events", "/api/v1/events?limit=30&store=chrome,edge", "/events?limit=30&store=chrome,edge", "/api/v1/events.csv?limit=30&store=chrome,edge",
			"events", "eventId", []string{"at", "store", "id", "name", "kind"}, 10},
		{"events since", "/api/v1/events?limit=20&since=2000-01-01", "", "/api/v1/events.csv?limit=20&since=2000-01-01",
			"events", "eventId", []string{"at", "store", "id"}, 10},
		{"a listing's changes", "/api/v1/listings/" + listing + "/changes?limit=3", "/listings/" + listing + "/changes?limit=3",
			"/api/v1/listings/" + listing + "/changes.csv?limit=3", "changes", "eventId", []string{"at", "store", "id"}, 10},
		{"the change feed", "/api/v1/changes?limit=40", "", "", "changes", "id",
			[]string{"store", "id", "name", "changed_at", "metadata_at", "read_at", "live", "size"}, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var doc map[string]json.RawMessage
			if a := get(t, "GET", h.Base+c.api); a.status != 200 || json.Unmarshal(a.body, &doc) != nil {
				t.Fatalf("JSON: %d %.200s", a.status, a.body)
			}
			var items []json.RawMessage
			if err := json.Unmarshal(doc[c.list], &items); err != nil || len(items) == 0 {
				t.Fatalf("JSON %s: %v, %d entries", c.list, err, len(items))
			}
			fields := make([]string, len(items))
			for i, raw := range items {
				var m map[string]any
				json.Unmarshal(raw, &m)
				fields[i], _ = m[c.field].(string)
			}

			// CSV: a header, then the JSON's entries in its order.
			byFormat := get(t, "GET", h.Base+c.api+"&format=csv")
			rows := csvRows(t, byFormat)
			if len(rows) != len(items)+1 || strings.Join(rows[0][:len(c.header)], ",") != strings.Join(c.header, ",") {
				t.Fatalf("CSV: header %v and %d rows, want %v and %d", rows[0], len(rows)-1, c.header, len(items))
			}
			for i, r := range rows[1:] {
				if r[c.column] != fields[i] {
					t.Fatalf("CSV row %d holds %q, the JSON's entry %q", i, r[c.column], fields[i])
				}
			}
			if !strings.Contains(byFormat.header.Get("Vary"), "Accept") {
				t.Errorf("Vary %q does not name Accept", byFormat.header.Get("Vary"))
			}
			if d := byFormat.header.Get("Content-Disposition"); !strings.HasPrefix(d, "attachment; filename=") || !strings.HasSuffix(d, `.csv"`) {
				t.Errorf("Content-Disposition %q", d)
			}
			if a := getWith(t, h.Base+c.api, "Accept", "text/csv"); !bytes.Equal(a.body, byFormat.body) {
				t.Errorf("Accept: text/csv answered %.100q", a.body)
			}
			if a := getWith(t, h.Base+c.api, "Accept", "text/html,application/xhtml+xml,*/*;q=0.8"); !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
				t.Errorf("a browser's Accept got %s", a.header.Get("Content-Type"))
			}

			// NDJSON: each line is the JSON's entry, byte for byte.
			nd := get(t, "GET", h.Base+c.api+"&format=ndjson")
			if nd.status != 200 || nd.header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("NDJSON: %d %s", nd.status, nd.header.Get("Content-Type"))
			}
			lines := strings.Split(strings.TrimSuffix(string(nd.body), "\n"), "\n")
			if len(lines) != len(items) {
				t.Fatalf("NDJSON has %d lines, the JSON %d entries", len(lines), len(items))
			}
			for i, line := range lines {
				if line != string(items[i]) {
					t.Fatalf("NDJSON line %d differs from the JSON's entry:\n%s\n%s", i, line, items[i])
				}
			}
			if a := getWith(t, h.Base+c.api, "Accept", "application/x-ndjson"); !bytes.Equal(a.body, nd.body) {
				t.Errorf("Accept: application/x-ndjson answered %.100q", a.body)
			}

			if d := problem(t, get(t, "GET", h.Base+c.api+"&format=xml"), 400); !strings.Contains(d, "json, csv, ndjson") {
				t.Errorf("format=xml: %q does not name the formats", d)
			}
			if c.page != "" {
				a := get(t, "GET", h.Base+c.page+"&format=csv")
				if !bytes.Equal(a.body, byFormat.body) || !strings.HasPrefix(a.header.Get("Cache-Control"), "public") {
					t.Errorf("the page's CSV: %d %s %.100q", a.status, a.header.Get("Cache-Control"), a.body)
				}
				if a := get(t, "GET", h.Base+c.page+"&format=ndjson"); !bytes.Equal(a.body, nd.body) {
					t.Errorf("the page's NDJSON: %d %.100q", a.status, a.body)
				}
				if a := get(t, "GET", h.Base+c.page); a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/html") {
					t.Errorf("the page: %d %s", a.status, a.header.Get("Content-Type"))
				}
			}
			if c.csvRoute != "" {
				a := getWith(t, h.Base+c.csvRoute, "Accept", "application/json")
				if !bytes.Equal(a.body, byFormat.body) {
					t.Errorf("%s with Accept: application/json: %d %.100q", c.csvRoute, a.status, a.body)
				}
			}
		})
	}

	// A file of the change feed names the next while changes remain;
	// following it gives the rows of the JSON page after.
	var first struct{ NextCursor string }
	if a := get(t, "GET", h.Base+"/api/v1/changes?limit=5"); json.Unmarshal(a.body, &first) != nil {
		t.Fatalf("the change feed: %d %.200s", a.status, a.body)
	}
	f := get(t, "GET", h.Base+"/api/v1/changes?limit=5&format=csv")
	m := nextFileLink.FindStringSubmatch(f.header.Get("Link"))
	if m == nil || m[1] != "/api/v1/changes?since="+url.QueryEscape(first.NextCursor)+"&limit=5&format=csv" {
		t.Fatalf("the change feed's file names no next file: Link %q", f.header.Get("Link"))
	}
	var second struct{ Changes []struct{ ID string } }
	if a := get(t, "GET", h.Base+"/api/v1/changes?limit=5&since="+url.QueryEscape(first.NextCursor)); json.Unmarshal(a.body, &second) != nil {
		t.Fatalf("the second page: %d", a.status)
	}
	next := csvRows(t, get(t, "GET", h.Base+m[1]))
	if len(next) != len(second.Changes)+1 {
		t.Fatalf("the next file has %d rows, the page %d", len(next)-1, len(second.Changes))
	}
	for i, r := range next[1:] {
		if r[1] != second.Changes[i].ID {
			t.Fatalf("next file row %d is %s, the page's %s", i, r[1], second.Changes[i].ID)
		}
	}
	// An edition is one document of several lists: JSON (and its page) only.
	if d := problem(t, get(t, "GET", h.Base+"/api/v1/week?format=csv"), 400); !strings.Contains(d, "json") {
		t.Errorf("an edition as CSV: %q", d)
	}
}
