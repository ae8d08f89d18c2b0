package edge_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/edge-stats/edge/edge/edgetest"
	"github.com/edge-stats/edge/views"
)

// listRead is a list read of the API to be answered as files: its
// address, and where its JSON holds the rows.
type listRead struct {
	name, path, rows string
	perRow           int // CSV rows a JSON row makes (0: one)
}

// TestEveryListReadAnswersFiles: each list read answers CSV and NDJSON
// of the rows its JSON holds, in their order (NDJSON line by line the
// JSON's rows, byte for byte), by format= and by Accept, with Vary
// naming Accept, and refuses a format it has not with a 400 naming those
// it has.
func TestEveryListReadAnswersFiles(t *testing.T) {
	h := start(t, seededWith(t, edgetest.DemoSeed(400)))
	for _, job := range []string{"views", "ranks"} {
		if err := h.Jobs.RunNow(job); err != nil {
			t.Fatal(job, err)
		}
	}
	chrome := firstLive(t, h, views.Chrome)
	edge := firstLive(t, h, views.Edge)
	// A firefox listing with reviews (the demo data gives most some).
	var reviewed string
	for _, l := range h.State.Load().Replica.OfStore(views.Firefox) {
		var p struct{ Reviews []json.RawMessage }
		if a := get(t, "GET", h.Base+"/api/v1/listings/firefox/"+l.ID+"/reviews"); a.status == 200 && json.Unmarshal(a.body, &p) == nil && len(p.Reviews) > 0 {
			reviewed = l.ID
			break
		}
	}
	reads := []listRead{
		{"listings", "/api/v1/listings?store=edge&limit=30", "listings", 0},
		{"history", "/api/v1/listings/chrome/" + chrome.ID + "/history?days=30", "snapshots", 0},
		{"reviews", "/api/v1/listings/firefox/" + reviewed + "/reviews", "reviews", 0},
		{"review search", "/api/v1/reviews/search?q=the&stars=all", "hits", 0},
		{"compare", "/api/v1/compare?listings=chrome:" + chrome.ID + ",edge:" + edge.ID + "&days=30", "listings", 30},
	}
	for _, r := range reads {
		t.Run(r.name, func(t *testing.T) {
			js := get(t, "GET", h.Base+r.path)
			var doc map[string]json.RawMessage
			if js.status != 200 || json.Unmarshal(js.body, &doc) != nil {
				t.Fatalf("JSON: %d %.200s", js.status, js.body)
			}
			var rows []json.RawMessage
			if err := json.Unmarshal(doc[r.rows], &rows); err != nil {
				t.Fatalf("JSON rows %q: %v", r.rows, err)
			}
			sep := "?"
			if strings.Contains(r.path, "?") {
				sep = "&"
			}
			csvAns := get(t, "GET", h.Base+r.path+sep+"format=csv")
			if n := len(csvRows(t, csvAns)) - 1; n != len(rows)*max(r.perRow, 1) {
				t.Errorf("CSV has %d rows, the JSON %d (%d each)", n, len(rows), max(r.perRow, 1))
			}
			if a := getWith(t, h.Base+r.path, "Accept", "text/csv"); !bytes.Equal(a.body, csvAns.body) {
				t.Errorf("Accept: text/csv answered %.100q", a.body)
			}
			nd := getWith(t, h.Base+r.path, "Accept", "application/x-ndjson")
			if nd.status != 200 || nd.header.Get("Content-Type") != "application/x-ndjson" || !strings.Contains(nd.header.Get("Vary"), "Accept") {
				t.Fatalf("NDJSON: %d %s, Vary %q", nd.status, nd.header.Get("Content-Type"), nd.header.Get("Vary"))
			}
			var lines []string
			if len(nd.body) > 0 {
				lines = strings.Split(strings.TrimSuffix(string(nd.body), "\n"), "\n")
			}
			if len(lines) != len(rows) {
				t.Fatalf("NDJSON has %d lines, the JSON %d rows", len(lines), len(rows))
			}
			for i, line := range lines {
				var compact bytes.Buffer
				json.Compact(&compact, rows[i])
				if line != compact.String() {
					t.Fatalf("NDJSON line %d differs from the JSON's row:\n%s\n%s", i, line, compact.String())
				}
			}
			if d := problem(t, get(t, "GET", h.Base+r.path+sep+"format=xlsx"), 400); !strings.Contains(d, "json, csv, ndjson") {
				t.Errorf("format=xlsx: %q", d)
			}
			if len(rows) == 0 {
				t.Errorf("the demo data gives %s no rows: the test compares nothing", r.name)
			}
		})
	}
}
