package v1

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/edge-stats/edge/views/figures"
)

// TestFigureFilesGuardTheirText: a list's CSV opens with the byte-order
// mark, has its header, one row an element with the stores' text guarded
// against spreadsheet formulas, and a file name made of safe bytes; its
// NDJSON is each element's JSON a line.
func TestFigureFilesGuardTheirText(t *testing.T) {
	g := int64(-4)
	v := &Categories{Store: "chrome", Categories: []figures.CategoryCount{{Name: "=SUM(A1)", Listings: 3, TotalSize: 900, Growth7d: &g}, {Name: "Tools, \"dev\"", Listings: 1}}}
	cs := CategoriesFiles()
	if len(cs) != 2 || cs[0].Name != "csv" || cs[1].Name != "ndjson" {
		t.Fatalf("codecs %v", cs)
	}
	a, err := cs[0].Encode(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	body, ok := bytes.CutPrefix(a.Body, []byte("\ufeff"))
	if !ok || a.ContentType != "text/csv; charset=utf-8" {
		t.Fatalf("no byte-order mark or content type %q", a.ContentType)
	}
	rows, err := csv.NewReader(bytes.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"store", "name", "listings", "total_size", "growth_7d", "growth_30d"}, {"chrome", "'=SUM(A1)", "3", "900", "-4", ""}, {"chrome", "Tools, \"dev\"", "1", "0", "", ""}}
	if len(rows) != len(want) {
		t.Fatalf("rows %q", rows)
	}
	for i := range want {
		if strings.Join(rows[i], "|") != strings.Join(want[i], "|") {
			t.Errorf("row %d is %q, want %q", i, rows[i], want[i])
		}
	}
	nd, err := cs[1].Encode(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(nd.Body); got != "{\"name\":\"=SUM(A1)\",\"listings\":3,\"totalSize\":900,\"growth7d\":-4,\"growth30d\":null}\n{\"name\":\"Tools, \\\"dev\\\"\",\"listings\":1,\"totalSize\":0,\"growth7d\":null,\"growth30d\":null}\n" {
		t.Errorf("NDJSON %q", got)
	}
	for in, want := range map[string]string{"ad-blocker": "ad-blocker", "a b/../\"c\"": "abc", "été_1": "t_1", "": ""} {
		if got := fileSafe(in); got != want {
			t.Errorf("fileSafe(%q) = %q, want %q", in, got, want)
		}
	}
}
