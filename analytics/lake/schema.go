package lake

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Schema describes one table of the lake as its schema file says it, a
// file beside the table's Parquet files that a program reads to know the
// columns before it reads any file: the table, its schema's version (the
// edge.schema every file of it holds), the columns its files are sorted
// by, and each column's name, types and meaning.
type Schema struct {
	Table    string   `json:"table"`
	Version  string   `json:"schema"`   // such as readings@1
	SortedBy []string `json:"sortedBy"` // the files' order
	Columns  []Column `json:"columns"`  // in the files' order
	Rule     string   `json:"rule"`     // how the schema may change
}

// Column is one column of a table.
type Column struct {
	Name        string `json:"name"`
	Parquet     string `json:"parquetType"` // the physical type, and the logical type where there is one
	DuckDB      string `json:"duckdbType"`  // the type DuckDB reads it as
	Nullable    bool   `json:"nullable"`
	Description string `json:"description"`
}

// SchemaRule is every schema's rule for changes (docs/api-v1.md, The
// lake).
const SchemaRule = "A new column is added last, nullable, within the same version. A column is never renamed, " +
	"retyped or given another meaning within a version: that is a new version, written to files of another path " +
	"(parquet/{table}@{version}/...), beside these."

// Schemas returns the schema of each table, in the order listings,
// readings, changes, reviews.
func Schemas() []Schema {
	return []Schema{
		describe[Listing]("listings", ListingsSchema, []string{"store", "id"}, listingDocs),
		describe[Reading]("readings", ReadingsSchema, []string{"store", "id", "day"}, readingDocs),
		describe[Change]("changes", ChangesSchema, []string{"store", "id", "changed_at"}, changeDocs),
		describe[Review]("reviews", ReviewsSchema, []string{"store", "id", "review_id"}, reviewDocs),
	}
}

// SchemaOf returns table's schema.
func SchemaOf(table string) (Schema, bool) {
	for _, s := range Schemas() {
		if s.Table == table {
			return s, true
		}
	}
	return Schema{}, false
}

// JSON returns the schema file's bytes: the same for the same schema.
func (s Schema) JSON() []byte {
	b, _ := json.MarshalIndent(s, "", "  ")
	return append(b, '\n')
}

// describe returns the schema of table, whose rows are T, with the
// descriptions docs of its columns; it panics when a column has none (or
// docs one the table lacks), which TestSchemasDescribeEveryColumn holds.
func describe[T any](table, version string, sorted []string, docs map[string]string) Schema {
	s := Schema{Table: table, Version: version, SortedBy: sorted, Rule: SchemaRule}
	for _, f := range parquet.SchemaOf(new(T)).Fields() {
		d, ok := docs[f.Name()]
		if !ok {
			panic(fmt.Sprintf("lake: column %s of %s has no description", f.Name(), table))
		}
		pq, duck := types(f)
		s.Columns = append(s.Columns, Column{Name: f.Name(), Parquet: pq, DuckDB: duck, Nullable: f.Optional(), Description: d})
	}
	if len(s.Columns) != len(docs) {
		panic(fmt.Sprintf("lake: %s describes %d columns of %d", table, len(docs), len(s.Columns)))
	}
	return s
}

// types returns a column's Parquet type (physical, then logical) and
// DuckDB's for it; a list's are its elements' in a LIST.
func types(f parquet.Field) (string, string) {
	if !f.Leaf() {
		el := f.Fields()[0]
		for !el.Leaf() {
			el = el.Fields()[0]
		}
		pq, duck := types(el)
		return "LIST<" + pq + ">", duck + "[]"
	}
	t := f.Type()
	pq := t.Kind().String()
	lt := ""
	if l := t.LogicalType(); l != nil {
		lt = l.String()
		pq += " (" + lt + ")"
	}
	switch {
	case lt == "STRING":
		return pq, "VARCHAR"
	case lt == "DATE":
		return pq, "DATE"
	case strings.HasPrefix(lt, "TIMESTAMP(isAdjustedToUTC=true"):
		return pq, "TIMESTAMP WITH TIME ZONE"
	case lt == "INT(64,true)" || lt == "" && t.Kind() == parquet.Int64:
		return pq, "BIGINT"
	case lt == "INT(32,true)" || lt == "" && t.Kind() == parquet.Int32:
		return pq, "INTEGER"
	case t.Kind() == parquet.Double:
		return pq, "DOUBLE"
	case t.Kind() == parquet.Boolean:
		return pq, "BOOLEAN"
	}
	panic("lake: no DuckDB type for " + pq)
}

var listingDocs = map[string]string{
	"store":            "The store: chrome, edge, firefox, apple or googleplay.",
	"id":               "The listing's id in its store.",
	"slug":             "The listing's slug in its store's addresses, where the store has one.",
	"name":             "The listing's name.",
	"developer":        "Its developer, as the store names them.",
	"category":         "Its category in its store.",
	"kind":             "extension, theme or app.",
	"version":          "Its version.",
	"updated":          "The day of its last update, as the store gives it.",
	"created":          "The day it was published, as the store gives it.",
	"first_seen":       "When the crawler first saw it.",
	"delisted_at":      "When it left its store (null while listed).",
	"metadata_at":      "The crawl of its metadata as of the day's end.",
	"read_at":          "The crawl of its latest reading in the week up to the day's end.",
	"size":             "Its size: its usage figure, or on apple its rating count (users on chrome, installs on edge and googleplay, daily users on firefox, ratings on apple).",
	"usage":            "Its usage figure, as its store gives it (null on apple).",
	"weekly_downloads": "Its downloads of the week (firefox).",
	"rating":           "Its average rating, 1 to 5.",
	"rating_count":     "How many ratings it has.",
	"day_readings":     "How many readings of it the day held.",
}

var readingDocs = map[string]string{
	"store":            listingDocs["store"],
	"id":               listingDocs["id"],
	"day":              "The UTC day of the reading.",
	"read_at":          "The crawl of the reading: the day's latest.",
	"size":             listingDocs["size"],
	"usage":            listingDocs["usage"],
	"weekly_downloads": listingDocs["weekly_downloads"],
	"rating":           listingDocs["rating"],
	"rating_count":     listingDocs["rating_count"],
	"rank":             "Its rank by size in its store that day, 1 the largest (null when the day was not ranked, it was not in the ranking, or the day has no size: as storeRank of the API's history).",
	"category_rank":    "Its rank by size in its category that day (null as rank).",
}

var changeDocs = map[string]string{
	"store":      listingDocs["store"],
	"id":         listingDocs["id"],
	"changed_at": "The crawl that saw the change (\"at\" is a keyword of DuckDB's SQL).",
	"kind":       "The kind of change, as the event feed names it.",
	"field":      "The listing document's field it changed.",
	"before":     "The field's value before (null for lists).",
	"after":      "The field's value after (null for lists).",
	"added":      "The items a change of a list added (permissions, host access; a takeover's new access).",
	"removed":    "The items a change of a list removed.",
	"widened":    "Whether a change of host access widened it (null for other kinds).",
	"takeover":   "True on a takeover and on the two changes it joins.",
	"event_id":   "The event feed's eventId of the change.",
	"joins":      "A takeover's two eventIds: the change of developer and the widening.",
}

var reviewDocs = map[string]string{
	"store":      listingDocs["store"],
	"id":         "The id of the listing reviewed.",
	"review_id":  "The review's id in its store.",
	"posted_at":  "When it was posted.",
	"stars":      "Its stars, 1 to 5.",
	"lang":       "Its language.",
	"text_chars": "The length of its text in characters (the text is not in the lake).",
	"crawled_at": "The crawl that read it.",
}
