package edge_test

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// getWith asks url with the request header name: value.
func getWith(t *testing.T, url, name, value string) answer {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(name, value)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	buf.ReadFrom(resp.Body)
	return answer{resp.StatusCode, resp.Header, buf.Bytes()}
}

// csvRows reads a CSV answer: its byte-order mark, then its rows.
func csvRows(t *testing.T, a answer) [][]string {
	t.Helper()
	if a.status != 200 || !strings.HasPrefix(a.header.Get("Content-Type"), "text/csv") {
		t.Fatalf("CSV: %d %s %.300s", a.status, a.header.Get("Content-Type"), a.body)
	}
	body, ok := bytes.CutPrefix(a.body, []byte("\ufeff"))
	if !ok || !bytes.Contains(body, []byte("\r\n")) {
		t.Fatalf("CSV without its byte-order mark or CRLF: %.100q", a.body)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

var nextFileLink = regexp.MustCompile(`<([^>]+)>; rel="next"`)

// TestListingsAsFiles: a listings query answers as CSV and NDJSON, by
// format= or by Accept, with the JSON page's filters, order and
// documents; a file holds up to its row cap and names the next file;
// the listings' page offers the same files; unknown formats and limits
// past the caps are problems that say what to send.
func TestListingsAsFiles(t *testing.T) {
	h := start(t, synthetic(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	api := h.Base + "/api/v1/listings?store=firefox&sort=name&limit=40"
	var page struct {
		Listings   []json.RawMessage
		NextCursor *string
	}
	if a := get(t, "GET", api); a.status != 200 || json.Unmarshal(a.body, &page) != nil || len(page.Listings) != 40 {
		t.Fatalf("JSON page: %d %.200s", a.status, a.body)
	}
	ids := make([]string, len(page.Listings))
	for i, raw := range page.Listings {
		var l struct{ Store, ID string }
		json.Unmarshal(raw, &l)
		ids[i] = l.ID
	}

	// CSV: a header, then the page's listings in its order.
	byFormat := get(t, "GET", api+"&format=csv")
	rows := csvRows(t, byFormat)
	if strings.Join(rows[0][:4], ",") != "store,id,name,developer" || len(rows) != 41 {
		t.Fatalf("CSV header %v, %d rows", rows[0], len(rows))
	}
	for i, r := range rows[1:] {
		if r[0] != "firefox" || r[1] != ids[i] {
			t.Fatalf("CSV row %d is %s/%s, the JSON's %s", i, r[0], r[1], ids[i])
		}
	}
	if d := byFormat.header.Get("Content-Disposition"); d != `attachment; filename="listings.csv"` {
		t.Errorf("Content-Disposition %q", d)
	}
	if !strings.Contains(byFormat.header.Get("Vary"), "Accept") {
		t.Errorf("Vary %q does not name Accept", byFormat.header.Get("Vary"))
	}
	// Accept chooses the same file; a browser's Accept gets the JSON.
	if a := getWith(t, api, "Accept", "text/csv"); !bytes.Equal(a.body, byFormat.body) || a.header.Get("ETag") != byFormat.header.Get("ETag") {
		t.Errorf("Accept: text/csv answered %.100q", a.body)
	}
	if a := getWith(t, api, "Accept", "text/html,application/xhtml+xml,*/*;q=0.8"); !strings.HasPrefix(a.header.Get("Content-Type"), "application/json") {
		t.Errorf("a browser's Accept got %s", a.header.Get("Content-Type"))
	}

	// NDJSON: each line is the JSON page's document of the listing.
	nd := get(t, "GET", api+"&format=ndjson")
	if nd.status != 200 || nd.header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("NDJSON: %d %s", nd.status, nd.header.Get("Content-Type"))
	}
	lines := strings.Split(strings.TrimSuffix(string(nd.body), "\n"), "\n")
	if len(lines) != len(page.Listings) {
		t.Fatalf("NDJSON has %d lines, the page %d listings", len(lines), len(page.Listings))
	}
	for i, line := range lines {
		if line != string(page.Listings[i]) {
			t.Fatalf("NDJSON line %d differs from the page's document:\n%s\n%s", i, line, page.Listings[i])
		}
	}

	// Without a limit a file holds every row of the query (here fewer
	// than its cap): every live firefox listing, and no next file.
	live := 0
	for _, l := range h.State.Load().Replica.All() {
		if l.Live() && l.Store.String() == "firefox" {
			live++
		}
	}
	whole := get(t, "GET", h.Base+"/api/v1/listings?store=firefox&format=csv")
	if n := len(csvRows(t, whole)) - 1; n != live || nextFileLink.MatchString(whole.header.Get("Link")) {
		t.Fatalf("the whole file holds %d rows of %d live, Link %q", n, live, whole.header.Get("Link"))
	}

	// A file cut by its limit names the next; following it gives the
	// rows the JSON pages give, in their order.
	first := get(t, "GET", h.Base+"/api/v1/listings?sort=name&store=firefox&limit=40&format=csv")
	m := nextFileLink.FindStringSubmatch(first.header.Get("Link"))
	if m == nil || !strings.HasPrefix(m[1], "/api/v1/listings?store=firefox&sort=name&limit=40&cursor=") || !strings.HasSuffix(m[1], "&format=csv") {
		t.Fatalf("the first file's Link %q names no next file", first.header.Get("Link"))
	}
	second := csvRows(t, get(t, "GET", h.Base+m[1]))
	var page2 struct{ Listings []struct{ ID string } }
	if a := get(t, "GET", api+"&cursor="+url.QueryEscape(*page.NextCursor)); json.Unmarshal(a.body, &page2) != nil || len(page2.Listings) != len(second)-1 {
		t.Fatalf("second JSON page: %d %.200s", a.status, a.body)
	}
	for i, r := range second[1:] {
		if r[1] != page2.Listings[i].ID {
			t.Fatalf("next file row %d is %s, the next page's %s", i, r[1], page2.Listings[i].ID)
		}
	}

	// The listings' page offers the same files, public as the page is.
	pageCSV := get(t, "GET", h.Base+"/listings?store=firefox&sort=name&limit=40&format=csv")
	if !bytes.Equal(pageCSV.body, byFormat.body) || !strings.HasPrefix(pageCSV.header.Get("Cache-Control"), "public") {
		t.Errorf("the page's CSV: %s %.100q", pageCSV.header.Get("Cache-Control"), pageCSV.body)
	}
	if m := nextFileLink.FindStringSubmatch(pageCSV.header.Get("Link")); m == nil || !strings.HasPrefix(m[1], "/listings?") {
		t.Errorf("the page's file names its next at %q", pageCSV.header.Get("Link"))
	}

	// Problems say what to send.
	for _, c := range []struct{ url, want string }{
		{"/api/v1/listings?format=xml", "json, csv, ndjson"},
		{"/api/v1/listings?format=csv&limit=10001", "from 1 to 10000"},
		{"/api/v1/listings?limit=101", "from 1 to 100"},
		{"/api/v1/listings?format=ndjson&limit=0", "from 1 to 10000"},
	} {
		if d := problem(t, get(t, "GET", h.Base+c.url), 400); !strings.Contains(d, c.want) {
			t.Errorf("%s: %q does not say %q", c.url, d, c.want)
		}
	}
}
