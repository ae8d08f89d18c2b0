package lake

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

// rows returns n export rows of store s, in id order, with every kind of
// value: nulls, apple's size from ratings, readings or none.
func rows(s views.Store, n int) []analytics.ExportRow {
	base := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	out := make([]analytics.ExportRow, n)
	for i := range out {
		r := &out[i]
		r.Store, r.ID, r.Name, r.Developer = s, fmt.Sprintf("id%07d", i), fmt.Sprintf("Listing %d", i), fmt.Sprintf("Dev %d", i%97)
		r.Category, r.Kind, r.Version = fmt.Sprintf("Category %d", i%13), views.Kind(i%3), fmt.Sprintf("1.%d", i%7)
		r.FirstSeen, r.MetadataAt = base.Add(-time.Duration(i)*time.Minute), base.Add(time.Duration(i)*time.Second)
		if i%5 != 0 {
			slug := fmt.Sprintf("slug-%d", i)
			r.Slug = &slug
			u := base.AddDate(0, 0, -i%400)
			r.Updated = &u
		}
		if i%11 == 0 {
			d := base.Add(time.Hour)
			r.DelistedAt = &d
		}
		if i%4 != 0 {
			usage, count, rating := uint64(i*10), uint64(i%500), 3+float64(i%200)/100
			r.Latest = &analytics.ExportReading{At: base.Add(time.Duration(i%86400) * time.Second), Usage: &usage, RatingCount: &count, Rating: &rating}
			r.Readings = make([]analytics.ExportReading, i%3)
		}
	}
	return out
}

func write(t testing.TB, rs []analytics.ExportRow) []byte {
	t.Helper()
	var b bytes.Buffer
	w := NewListingsWriter(&b)
	for i := range rs {
		if err := w.Write(&rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := w.Close(); err != nil || n != len(rs) {
		t.Fatalf("closed after %d rows: %v", n, err)
	}
	return b.Bytes()
}

// TestListingsRoundTrip: every row reads back as written, in order.
func TestListingsRoundTrip(t *testing.T) {
	for _, s := range []views.Store{views.Chrome, views.Apple} {
		rs := rows(s, 3000)
		b := write(t, rs)
		got, err := parquet.Read[Listing](bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(rs) {
			t.Fatalf("%s: %d rows read, %d written", s, len(got), len(rs))
		}
		for i := range rs {
			want := ListingOf(&rs[i])
			if fmt.Sprint(deref(got[i])) != fmt.Sprint(deref(want)) {
				t.Fatalf("%s row %d:\nread  %v\nwrote %v", s, i, deref(got[i]), deref(want))
			}
		}
		if s == views.Apple && (got[1].Size == nil || *got[1].Size != int64(*rs[1].Latest.RatingCount)) {
			t.Errorf("apple's size is not its ratings count: %v", got[1].Size)
		}
	}
}

// deref spells a row's pointers out, for comparing rows by value.
func deref(l Listing) string {
	p := func(v any) string {
		switch x := v.(type) {
		case *string:
			if x != nil {
				return *x
			}
		case *int64:
			if x != nil {
				return fmt.Sprint(*x)
			}
		case *int32:
			if x != nil {
				return views.Day(*x).String()
			}
		case *float64:
			if x != nil {
				return fmt.Sprint(*x)
			}
		case *time.Time:
			if x != nil {
				return x.UTC().Format(time.RFC3339Nano)
			}
		}
		return "null"
	}
	return fmt.Sprint(l.Store, l.ID, p(l.Slug), l.Name, l.Developer, l.Category, l.Kind, l.Version, p(l.Updated), p(l.Created),
		l.FirstSeen.UTC(), p(l.DelistedAt), l.MetadataAt.UTC(), p(l.ReadAt), p(l.Size), p(l.Usage), p(l.WeeklyDownloads), p(l.Rating), p(l.RatingCount), l.DayReadings)
}

// TestListingsFileIsAnIndex: the same rows give the same bytes; the file
// says its schema and its sort; its row groups hold at most RowsPerGroup
// rows, and its id column's pages are indexed in order, so that a reader
// of one listing reads one page of it: here under 1% of the id column.
func TestListingsFileIsAnIndex(t *testing.T) {
	rs := rows(views.Chrome, 120_000)
	b := write(t, rs)
	if again := write(t, rs); sha256.Sum256(again) != sha256.Sum256(b) {
		t.Fatal("two writes of the same rows differ")
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := f.Lookup("edge.schema"); !ok || v != ListingsSchema {
		t.Errorf("edge.schema %q", v)
	}
	groups := f.RowGroups()
	if len(groups) != 3 {
		t.Fatalf("%d row groups for %d rows, want 3 of at most %d", len(groups), len(rs), RowsPerGroup)
	}
	idCol, _ := f.Schema().Lookup("id")
	pages, bytesRead, total := 0, int64(0), int64(0)
	last := ""
	target := "id0061234"
	for _, g := range groups {
		if sc := g.SortingColumns(); len(sc) != 2 || sc[0].Path()[0] != "store" || sc[1].Path()[0] != "id" {
			t.Fatalf("sorting columns %v", sc)
		}
		cc := g.ColumnChunks()[idCol.ColumnIndex]
		ci, err := cc.ColumnIndex()
		if err != nil {
			t.Fatal(err)
		}
		oi, err := cc.OffsetIndex()
		if err != nil {
			t.Fatal(err)
		}
		for p := 0; p < ci.NumPages(); p++ {
			lo, hi := ci.MinValue(p).String(), ci.MaxValue(p).String()
			if lo < last || hi < lo {
				t.Fatalf("page %d of id runs %s to %s after %s: not in order", p, lo, hi, last)
			}
			last = hi
			total += oi.CompressedPageSize(p)
			if lo <= target && target <= hi {
				pages++
				bytesRead += oi.CompressedPageSize(p)
			}
		}
	}
	if pages != 1 || bytesRead*100 > total {
		t.Errorf("a lookup of %s reads %d pages, %d of the id column's %d bytes", target, pages, bytesRead, total)
	}
}
