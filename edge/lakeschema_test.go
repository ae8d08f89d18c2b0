package edge_test

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/edge-stats/edge/analytics/exports"
	"github.com/edge-stats/edge/analytics/lake"
)

// lakeSchemas reads each table's schema file, of a day and of the latest
// set, as a program would before it reads the table: listed with its
// size and SHA-256 and no store, served as JSON with a strong ETag, the
// schema the files' footers name; and DuckDB reads the table's columns
// with the names, types and order the file says.
func lakeSchemas(t *testing.T, h *harness, l lakeListing, auth map[string]string) {
	dir := t.TempDir()
	for _, set := range []struct {
		name, prefix string
		files        []lakeFile
	}{{"day " + l.Days[1].Day, "/api/v1/exports/" + l.Days[1].Day + "/", l.Days[1].Files}, {"latest", "/api/v1/exports/latest/", l.Latest.Files}} {
		schemas := map[string]lakeFile{}
		for _, f := range set.files {
			if f.Format == exports.FormatSchema {
				schemas[f.Content] = f
			}
		}
		if len(schemas) != len(exports.Tables) {
			t.Fatalf("%s: schema files %v, want one a table", set.name, schemas)
		}
		for _, table := range exports.Tables {
			f := schemas[table]
			want, _ := lake.SchemaOf(table)
			if f.Name != exports.SchemaName(table) || f.URL != set.prefix+f.Name || f.Store != "" || f.Rows != len(want.Columns) {
				t.Fatalf("%s: %s's schema listed as %+v", set.name, table, f)
			}
			a := call(t, "GET", h.Base+f.URL, auth, "")
			if a.status != 200 || a.header.Get("Content-Type") != "application/json" || a.header.Get("ETag") != `"`+f.SHA256+`"` ||
				int64(len(a.body)) != f.Size || !bytes.Equal(a.body, want.JSON()) {
				t.Fatalf("%s: %s: %d %v\n%s", set.name, f.URL, a.status, a.header, a.body)
			}
			var got lake.Schema
			if err := json.Unmarshal(a.body, &got); err != nil || got.Version != want.Version {
				t.Fatalf("%s: %s: %v %+v", set.name, f.URL, err, got)
			}
		}
	}
	// DuckDB's view of the latest chrome files, against their schema files.
	pq := parquetOf(l.Latest.Files)
	for _, table := range exports.Tables {
		want, _ := lake.SchemaOf(table)
		for _, s := range []string{"chrome", "googleplay"} {
			f := pq["parquet/"+table+"/store="+s+"/part-0.parquet"]
			path := download(t, h, auth, f, filepath.Join(dir, s))
			rows := duckdb(t,
				"SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM read_parquet("+sqlPath(path)+", hive_partitioning = false))",
				"SELECT decode(value) AS v FROM parquet_kv_metadata("+sqlPath(path)+") WHERE decode(key) = 'edge.schema'")
			cols := rows[0]
			if len(cols) != len(want.Columns) || len(rows[1]) != 1 || rows[1][0]["v"] != want.Version {
				t.Fatalf("%s of %s: DuckDB reads %v (%v), the schema file says %d columns of %s", table, s, cols, rows[1], len(want.Columns), want.Version)
			}
			for i, c := range want.Columns {
				if cols[i]["column_name"] != c.Name || cols[i]["column_type"] != c.DuckDB {
					t.Errorf("%s of %s, column %d: DuckDB reads %v, the schema file says %s %s", table, s, i, cols[i], c.Name, c.DuckDB)
				}
			}
		}
	}
}
