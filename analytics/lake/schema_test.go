package lake

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// TestSchemasDescribeEveryColumn holds the schema files to the tables'
// rows: every column described, in the files' order, with the types
// DuckDB reads (TestLake checks those against DuckDB itself), the
// version every file's footer says, and the same bytes each time.
func TestSchemasDescribeEveryColumn(t *testing.T) {
	want := map[string]struct {
		version string
		columns int
		typed   map[string]string
	}{
		"listings": {ListingsSchema, 20, map[string]string{"updated": "DATE", "first_seen": "TIMESTAMP WITH TIME ZONE", "rating": "DOUBLE", "day_readings": "INTEGER"}},
		"readings": {ReadingsSchema, 11, map[string]string{"day": "DATE", "size": "BIGINT", "rank": "INTEGER"}},
		"changes":  {ChangesSchema, 13, map[string]string{"added": "VARCHAR[]", "widened": "BOOLEAN", "takeover": "BOOLEAN", "joins": "VARCHAR[]"}},
		"reviews":  {ReviewsSchema, 8, map[string]string{"stars": "INTEGER", "text_chars": "BIGINT", "review_id": "VARCHAR"}},
	}
	schemas := Schemas()
	if len(schemas) != len(want) {
		t.Fatalf("%d schemas, want %d", len(schemas), len(want))
	}
	for _, s := range schemas {
		w, ok := want[s.Table]
		if !ok || s.Version != w.version || len(s.Columns) != w.columns {
			t.Errorf("%s: version %s, %d columns; want %s and %d", s.Table, s.Version, len(s.Columns), w.version, w.columns)
		}
		for _, c := range s.Columns {
			if c.Description == "" || c.Parquet == "" || c.DuckDB == "" {
				t.Errorf("%s.%s: %+v", s.Table, c.Name, c)
			}
			if d, ok := w.typed[c.Name]; ok && c.DuckDB != d {
				t.Errorf("%s.%s reads as %s, want %s", s.Table, c.Name, c.DuckDB, d)
			}
		}
		if s.Columns[0].Name != "store" || s.Columns[1].Name != "id" || !slices.Equal(s.SortedBy[:2], []string{"store", "id"}) {
			t.Errorf("%s: columns start %s, %s; sorted by %v", s.Table, s.Columns[0].Name, s.Columns[1].Name, s.SortedBy)
		}
		for _, c := range s.SortedBy {
			if !slices.ContainsFunc(s.Columns, func(col Column) bool { return col.Name == c }) {
				t.Errorf("%s: sorted by %s, which it lacks", s.Table, c)
			}
		}
		var back Schema
		if err := json.Unmarshal(s.JSON(), &back); err != nil || back.Version != s.Version || len(back.Columns) != len(s.Columns) {
			t.Errorf("%s: the file reads back as %+v (%v)", s.Table, back, err)
		}
		again, _ := SchemaOf(s.Table)
		if !bytes.Equal(again.JSON(), s.JSON()) {
			t.Errorf("%s: two schema files differ", s.Table)
		}
	}
	if _, ok := SchemaOf("nope"); ok {
		t.Error("a schema of a table there is not")
	}
}
