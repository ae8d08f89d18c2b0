// Package lake writes the catalog as Parquet for analysts (issue 77): a
// table a file, rows sorted by store and id, in row groups small enough
// and with page indexes and column statistics, so that a reader over
// HTTP range requests (DuckDB, Polars, hyparquet in a browser) fetches
// one listing's rows without the whole file. Files are byte-stable: the
// same rows give the same bytes (no time of writing inside), so a day's
// file keeps its sha256 when written again.
//
// Four tables: listings (a listing's state at a day's end), readings
// (a listing's reading of each day, with its ranks), changes (every
// change of a listing, takeovers among them) and reviews (their metadata,
// no text). Package exports decides which rows go in which file and
// where; this package decides how a row is written.
package lake

import (
	"fmt"
	"io"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

// ListingsSchema names the listings table's schema and its version, as
// every file of it says in its key-value metadata (edge.schema). A
// change that adds a column keeps the version's number and adds it last
// with nulls before it; any other change (a column renamed, removed or
// retyped) is a new version, in files of another path, so that a query of
// the old columns never reads a column that means something else.
const ListingsSchema = "listings@1"

// RowsPerGroup is the most rows a row group holds, and PageBytes the
// size a data page is cut at: a listing's row is found by the row
// groups' statistics on id and then by the page index, so a reader of
// one listing fetches a page of each column it reads.
const (
	RowsPerGroup = 50_000
	PageBytes    = 8 << 10
)

// Listing is one row of the listings table: a listing's state at the end
// of a UTC day, as the daily export writes it (its newest metadata
// version crawled before the day's end and its latest reading in the
// week up to it), with how many readings the day held.
type Listing struct {
	Store           string     `parquet:"store,dict"`
	ID              string     `parquet:"id"`
	Slug            *string    `parquet:"slug,optional"`
	Name            string     `parquet:"name"`
	Developer       string     `parquet:"developer"`
	Category        string     `parquet:"category,dict"`
	Kind            string     `parquet:"kind,dict"`
	Version         string     `parquet:"version"`
	Updated         *int32     `parquet:"updated,optional,date"` // days since 1970-01-01 (Parquet's DATE)
	Created         *int32     `parquet:"created,optional,date"`
	FirstSeen       time.Time  `parquet:"first_seen,timestamp(millisecond)"`
	DelistedAt      *time.Time `parquet:"delisted_at,optional,timestamp(millisecond)"`
	MetadataAt      time.Time  `parquet:"metadata_at,timestamp(millisecond)"`
	ReadAt          *time.Time `parquet:"read_at,optional,timestamp(millisecond)"`
	Size            *int64     `parquet:"size,optional"`
	Usage           *int64     `parquet:"usage,optional"`
	WeeklyDownloads *int64     `parquet:"weekly_downloads,optional"`
	Rating          *float64   `parquet:"rating,optional"`
	RatingCount     *int64     `parquet:"rating_count,optional"`
	DayReadings     int32      `parquet:"day_readings"`
}

// ListingOf returns r's row.
func ListingOf(r *analytics.ExportRow) Listing {
	l := Listing{Store: r.Store.String(), ID: r.ID, Slug: r.Slug, Name: r.Name, Developer: r.Developer, Category: r.Category,
		Kind: r.Kind.String(), Version: r.Version, Updated: day(r.Updated), Created: day(r.Created), FirstSeen: r.FirstSeen.UTC(),
		DelistedAt: utc(r.DelistedAt), MetadataAt: r.MetadataAt.UTC(), DayReadings: int32(len(r.Readings))}
	if x := r.Latest; x != nil {
		at := x.At.UTC()
		l.ReadAt, l.Usage, l.WeeklyDownloads, l.Rating, l.RatingCount = &at, i64(x.Usage), i64(x.WeeklyDownloads), x.Rating, i64(x.RatingCount)
		l.Size = l.Usage
		if r.Store == views.Apple {
			l.Size = l.RatingCount
		}
	}
	return l
}

// ListingsWriter writes a listings file: rows given in (store, id)
// order, as the export streams them.
type ListingsWriter struct{ *Writer[Listing] }

// NewListingsWriter returns a writer of a listings file to out.
func NewListingsWriter(out io.Writer) ListingsWriter {
	return ListingsWriter{NewWriter[Listing](out, ListingsSchema, RowsPerGroup, "store", "id")}
}

// Write adds r's row.
func (w ListingsWriter) Write(r *analytics.ExportRow) error { return w.Add(ListingOf(r)) }

// Writer writes one file of a table whose rows are T, given in the
// order of the sorting columns it is made with: it only records that
// order (a reader may skip row groups by it), it does not sort.
type Writer[T any] struct {
	w    *parquet.GenericWriter[T]
	buf  []T
	rows int
}

// NewWriter returns a writer of a file of schema (its edge.schema, such
// as ListingsSchema) to out, in row groups of at most rowsPerGroup rows
// and pages of PageBytes, sorted by the columns named.
func NewWriter[T any](out io.Writer, schema string, rowsPerGroup int64, sorted ...string) *Writer[T] {
	return NewPagedWriter[T](out, schema, rowsPerGroup, PageBytes, sorted...)
}

// NewPagedWriter is NewWriter with pages cut at pageBytes: parquet-go
// cuts a column's page when its values before encoding reach it.
func NewPagedWriter[T any](out io.Writer, schema string, rowsPerGroup int64, pageBytes int, sorted ...string) *Writer[T] {
	cols := make([]parquet.SortingColumn, len(sorted))
	for i, c := range sorted {
		cols[i] = parquet.Ascending(c)
	}
	return &Writer[T]{w: parquet.NewGenericWriter[T](out,
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.MaxRowsPerRowGroup(rowsPerGroup),
		parquet.PageBufferSize(pageBytes),
		parquet.CreatedBy("edge", "1", ""), // no build or time: the same rows give the same bytes
		parquet.KeyValueMetadata("edge.schema", schema),
		parquet.SortingWriterConfig(parquet.SortingColumns(cols...)),
		parquet.ColumnIndexSizeLimit(indexBytes),
	)}
}

// indexBytes is how much of a page's smallest and largest value its
// column index keeps: whole ids (up to idIndexBytes), so that a reader
// finds a listing's pages by them; parquet-go's 16 bytes would cut
// googleplay's package names and chrome's ids to a prefix that many
// pages share, and a reader of one listing would read them all.
func indexBytes(path []string) int {
	if len(path) > 0 && (path[0] == "id" || path[0] == "review_id") {
		return idIndexBytes
	}
	return parquet.DefaultColumnIndexSizeLimit
}

// idIndexBytes is the longest id a column index keeps whole.
const idIndexBytes = 256

// Add adds a row.
func (w *Writer[T]) Add(row T) error {
	w.buf = append(w.buf, row)
	w.rows++
	if len(w.buf) == 1024 {
		return w.flush()
	}
	return nil
}

func (w *Writer[T]) flush() error {
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("write rows: %w", err)
	}
	clear(w.buf) // no strings kept alive past their row
	w.buf = w.buf[:0]
	return nil
}

// Close writes what is buffered and the file's footer; it returns the
// rows written.
func (w *Writer[T]) Close() (int, error) {
	if err := w.flush(); err != nil {
		return w.rows, err
	}
	if err := w.w.Close(); err != nil {
		return w.rows, fmt.Errorf("close file: %w", err)
	}
	return w.rows, nil
}

// day is t's UTC day as Parquet's DATE counts it: days since 1970-01-01.
func day(t *time.Time) *int32 {
	if t == nil {
		return nil
	}
	d := int32(views.DayOf(*t))
	return &d
}

func utc(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := t.UTC()
	return &u
}

func i64(v *uint64) *int64 {
	if v == nil {
		return nil
	}
	x := int64(*v)
	return &x
}
