package exports

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/lake"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// The lake's tables (package lake), as a Parquet file's Content says.
const (
	TableListings = "listings"
	TableReadings = "readings"
	TableChanges  = "changes"
	TableReviews  = "reviews"
)

// Tables are the lake's tables, in manifest order.
var Tables = []string{TableListings, TableReadings, TableChanges, TableReviews}

// FormatParquet is the Format of the lake's files.
const FormatParquet = "parquet"

// ParquetName returns the name of store s's file of table in day d's
// export: a Hive partition (store=, date=), so that a reader given the
// files of many days reads store and date as columns.
func ParquetName(table string, s views.Store, d views.Day) string {
	return "parquet/" + table + "/store=" + s.String() + "/date=" + d.String() + "/part-0.parquet"
}

// LatestName returns the name of store s's file of table in a latest
// set: the whole table as of the set's day.
func LatestName(table string, s views.Store) string {
	return "parquet/" + table + "/store=" + s.String() + "/part-0.parquet"
}

// parquetOut is a Parquet file being written: a hashing counter over a
// buffered file (Parquet compresses its own pages).
type parquetOut struct {
	f    *os.File
	buf  *bufio.Writer
	cnt  *counted
	sum  interface{ Sum([]byte) []byte }
	file File
}

func createParquet(dir, name string, s views.Store, table string) (*parquetOut, error) {
	path := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	o := &parquetOut{f: f, buf: bufio.NewWriterSize(f, 1<<20), sum: h, file: File{Name: name, Store: s.String(), Content: table, Format: FormatParquet}}
	o.cnt = &counted{w: o.buf, hash: h}
	return o, nil
}

func (o *parquetOut) close(rows int, werr error) (File, error) {
	err := errors.Join(werr, o.buf.Flush(), o.f.Sync(), o.f.Close())
	o.file.Size, o.file.SHA256, o.file.Rows = o.cnt.n, hex.EncodeToString(o.sum.Sum(nil)), rows
	return o.file, err
}

// writeTable writes one Parquet file of rows T: fill adds its rows.
func writeTable[T any](dir, name string, s views.Store, table, schema string, perGroup int64, pageBytes int, fill func(w *lake.Writer[T]) error) (File, error) {
	o, err := createParquet(dir, name, s, table)
	if err != nil {
		return File{}, err
	}
	defer o.f.Close()
	sch, _ := lake.SchemaOf(table)
	w := lake.NewPagedWriter[T](o.cnt, schema, perGroup, pageBytes, sch.SortedBy...)
	err = fill(w)
	rows, cerr := w.Close()
	f, err := o.close(rows, errors.Join(err, cerr))
	if err != nil {
		return f, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// FormatSchema is the Format of the lake's schema files.
const FormatSchema = "schema"

// SchemaName returns the name of table's schema file in a day or a
// latest set: beside the table's partitions, outside their glob
// (parquet/{table}/*/*/*.parquet).
func SchemaName(table string) string { return "parquet/" + table + "/schema.json" }

// schemaNames are the names of the schema files a day or a set may hold.
func schemaNames() map[string]bool {
	allowed := map[string]bool{}
	for _, t := range Tables {
		allowed[SchemaName(t)] = true
	}
	return allowed
}

// writeSchemas writes each table's schema file (lake.Schema) into dir.
func writeSchemas(dir string) ([]File, error) {
	var out []File
	for _, s := range lake.Schemas() {
		b := s.JSON()
		name := SchemaName(s.Table)
		path := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return nil, err
		}
		sum := sha256.Sum256(b)
		out = append(out, File{Name: name, Content: s.Table, Format: FormatSchema, Size: int64(len(b)), Rows: len(s.Columns), SHA256: hex.EncodeToString(sum[:])})
	}
	return out, nil
}

// lakePartSize is how many listings one read of a lake table covers
// (analytics.StoreParts): a read of the whole history groups every day of
// its listings before its first row comes back, and ClickHouse must send
// that row within the connection's read timeout (30 s) on a busy server;
// 5,000 listings of two years are 3.6 M readings.
const lakePartSize = 5_000

// writeDayTables writes store s's readings, changes and reviews of day d
// into dir: the readings of the day, the changes its crawls saw, and the
// reviews they read.
func writeDayTables(ctx context.Context, conn driver.Conn, dir string, s views.Store, d views.Day) ([]File, error) {
	parts, err := analytics.StoreParts(ctx, conn, s, lakePartSize)
	if err != nil {
		return nil, err
	}
	from, end := d.Time(), (d + 1).Time()
	readings, err := writeReadings(ctx, conn, dir, ParquetName(TableReadings, s, d), s, parts, d, d)
	if err != nil {
		return nil, err
	}
	chs, err := writeChanges(ctx, conn, dir, ParquetName(TableChanges, s, d), s, parts, from, end)
	if err != nil {
		return nil, err
	}
	reviews, err := writeReviews(ctx, conn, dir, ParquetName(TableReviews, s, d), s, parts, from, end)
	if err != nil {
		return nil, err
	}
	return []File{readings, chs, reviews}, nil
}

func writeReadings(ctx context.Context, conn driver.Conn, dir, name string, s views.Store, parts []analytics.Part, from, to views.Day) (File, error) {
	return writeTable(dir, name, s, TableReadings, lake.ReadingsSchema, lake.ReadingsPerGroup, lake.ReadingsPageBytes, func(w *lake.Writer[lake.Reading]) error {
		return analytics.StreamDayReadings(ctx, conn, parts, from, to, func(r *analytics.DayReading) error {
			return w.Add(lake.ReadingOf(s, r))
		})
	})
}

// writeChanges writes the changes at or after from and before end of the
// listings with a version crawled in that time (every listing, when from
// is zero).
func writeChanges(ctx context.Context, conn driver.Conn, dir, name string, s views.Store, parts []analytics.Part, from, end time.Time) (File, error) {
	return writeTable(dir, name, s, TableChanges, lake.ChangesSchema, lake.RowsPerGroup, lake.PageBytes, func(w *lake.Writer[lake.Change]) error {
		var rows []lake.Change
		return analytics.StreamListingChanges(ctx, conn, parts, from, end, func(_ string, cs []changes.Change) error {
			rows = lake.ChangesOf(rows[:0], cs)
			for i := range rows {
				if rows[i].At.Before(from) {
					continue
				}
				if err := w.Add(rows[i]); err != nil {
					return err
				}
			}
			return nil
		})
	})
}

func writeReviews(ctx context.Context, conn driver.Conn, dir, name string, s views.Store, parts []analytics.Part, from, end time.Time) (File, error) {
	return writeTable(dir, name, s, TableReviews, lake.ReviewsSchema, lake.RowsPerGroup, lake.PageBytes, func(w *lake.Writer[lake.Review]) error {
		return analytics.StreamReviewMeta(ctx, conn, parts, from, end, func(r *analytics.ReviewMeta) error {
			return w.Add(lake.ReviewOf(s, r))
		})
	})
}
