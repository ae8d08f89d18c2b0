package v1

import (
	"bytes"
	"encoding/csv"
	"strconv"
	"strings"
	"testing"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
)

// TestListingsCSV: the listings CSV is one row a listing under its
// header, with the stores' text guarded against spreadsheet formulas,
// lists space-separated and nulls empty; the NDJSON one document a line.
func TestListingsCSV(t *testing.T) {
	ls := []*views.Listing{
		{Store: views.Chrome, ID: "abc", Name: "=HYPERLINK(\"http://x\")", Developer: "+cmd", Category: "@SUM(A1)",
			Permissions: []string{"tabs", "storage"}, Topics: []string{"-neg"}, FirstSeen: 1700000000},
		{Store: views.Firefox, ID: "plain", Name: "Plain, \"quoted\"\nname", Developer: "Dev", FirstSeen: 1700000000},
	}
	page := &document.ListingPage{Listings: ls}
	a, err := listingsCSV(page)
	if err != nil {
		t.Fatal(err)
	}
	body, ok := bytes.CutPrefix(a.Body, []byte("\ufeff"))
	if !ok || a.ContentType != "text/csv; charset=utf-8" {
		t.Fatalf("no byte-order mark or content type %q", a.ContentType)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil || len(rows) != 3 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	col := map[string]int{}
	for i, name := range rows[0] {
		col[name] = i
	}
	if len(rows[0]) != len(listingCSVHeader) || len(rows[1]) != len(rows[0]) {
		t.Fatalf("header of %d columns, row of %d", len(rows[0]), len(rows[1]))
	}
	for _, c := range []struct {
		row        int
		name, want string
	}{
		{1, "name", `'=HYPERLINK("http://x")`},
		{1, "developer", "'+cmd"},
		{1, "category", "'@SUM(A1)"},
		{1, "permissions", "tabs storage"},
		{1, "topics", "'-neg"},
		{1, "size", ""},
		{1, "rating", ""},
		{1, "first_seen", "2023-11-14T22:13:20Z"},
		{1, "live", strconv.FormatBool(ls[0].Live())},
		{2, "name", "Plain, \"quoted\"\nname"},
		{2, "store", "firefox"},
		{2, "size_measure", views.Firefox.SizeMeasure()},
	} {
		if got := rows[c.row][col[c.name]]; got != c.want {
			t.Errorf("row %d %s = %q, want %q", c.row, c.name, got, c.want)
		}
	}
	if !bytes.Contains(body, []byte("\r\n")) {
		t.Error("no CRLF line ends")
	}
	nd := listingsNDJSON(page)
	lines := strings.Split(strings.TrimSuffix(string(nd), "\n"), "\n")
	var d document.Listing
	for i, l := range ls {
		d.Fill(l, nil)
		if lines[i] != string(d.AppendJSON(nil)) {
			t.Errorf("NDJSON line %d: %s", i, lines[i])
		}
	}
}

// TestNextFile: a file's next part keeps the query's parameters in one
// order, percent-encoded, without the comparison being built.
func TestNextFile(t *testing.T) {
	form := map[string]string{"q": "a&b c", "store": "chrome", "compare": "chrome:x", "cursor": "old", "limit": "40"}
	got := nextFile("/listings", form, "NEXT", "ndjson")
	if want := "/listings?store=chrome&q=a%26b+c&limit=40&cursor=NEXT&format=ndjson"; got != want {
		t.Errorf("nextFile = %q, want %q", got, want)
	}
}
