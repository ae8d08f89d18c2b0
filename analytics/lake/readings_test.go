package lake

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

// history returns the readings of n listings over days days, by id then
// day, as a store's history streams them: sizes that drift, ratings that
// move by tenths, ranks on most days.
func history(n, days int) []analytics.DayReading {
	out := make([]analytics.DayReading, 0, n*days)
	first := views.DayOf(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	for i := range n {
		size := uint64(1000 + i*37)
		for d := range days {
			size += uint64((i + d) % 7)
			s, count := size, uint64(d/3)
			rating := 3 + float64((i+d/30)%20)/10
			r := analytics.DayReading{ID: fmt.Sprintf("%032x", i*7919), Day: first + views.Day(d),
				At: (first + views.Day(d)).Time().Add(time.Duration(i%86400) * time.Second), Usage: &s, RatingCount: &count, Rating: &rating}
			if d%10 != 0 {
				r.Rank, r.CategoryRank = uint32(n-i), uint32(1+i%50)
			}
			out = append(out, r)
		}
	}
	return out
}

// TestOneListingReadsLittle writes two years of readings of 2,000
// listings (1.46 M rows) and counts what a reader of one listing's
// history fetches, as DuckDB and hyparquet read a file over HTTP: the
// footer, the page indexes of the row groups whose id statistics hold
// it, and the pages that hold its rows of the columns a rating history
// reads (id, day, size, rating, rank). It must be a
// few hundred KB (at most 300 KiB), a small part of the file; and the
// listing's rows read back as written.
func TestOneListingReadsLittle(t *testing.T) {
	rs := history(2000, 730)
	var b bytes.Buffer
	w := NewPagedWriter[Reading](&b, ReadingsSchema, ReadingsPerGroup, ReadingsPageBytes, "store", "id", "day")
	for i := range rs {
		if err := w.Add(ReadingOf(views.Chrome, &rs[i])); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data := b.Bytes()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	target := rs[1234*730].ID
	read := int64(binary.LittleEndian.Uint32(data[len(data)-8:])) + 8 // the footer
	idCol, _ := f.Schema().Lookup("id")
	var got []Reading
	for gi, g := range f.RowGroups() {
		meta := f.Metadata().RowGroups[gi]
		cc := g.ColumnChunks()[idCol.ColumnIndex]
		ci, _ := cc.ColumnIndex()
		oi, _ := cc.OffsetIndex()
		// The rows of the group that may hold the listing, by the pages of id.
		from, to := int64(-1), int64(-1)
		for p := 0; p < ci.NumPages(); p++ {
			if ci.MinValue(p).String() <= target && target <= ci.MaxValue(p).String() {
				end := g.NumRows()
				if p+1 < oi.NumPages() {
					end = oi.FirstRowIndex(p + 1)
				}
				if from < 0 {
					from = oi.FirstRowIndex(p)
				}
				to = end
			}
		}
		if from < 0 {
			read += int64(meta.Columns[idCol.ColumnIndex].ColumnIndexLength) + int64(meta.Columns[idCol.ColumnIndex].OffsetIndexLength)
			continue
		}
		// Each column a rating history reads: its page indexes, and the
		// pages over those rows.
		for c, chunk := range g.ColumnChunks() {
			if name := f.Schema().Columns()[c][0]; name != "id" && name != "day" && name != "size" && name != "rating" && name != "rank" {
				continue
			}
			read += int64(meta.Columns[c].ColumnIndexLength) + int64(meta.Columns[c].OffsetIndexLength)
			oi, _ := chunk.OffsetIndex()
			if md := meta.Columns[c].MetaData; md.DictionaryPageOffset > 0 && oi.NumPages() > 0 {
				read += oi.Offset(0) - md.DictionaryPageOffset // a dictionary's page, read before any of its data
			}
			for p := 0; p < oi.NumPages(); p++ {
				end := g.NumRows()
				if p+1 < oi.NumPages() {
					end = oi.FirstRowIndex(p + 1)
				}
				if oi.FirstRowIndex(p) < to && end > from {
					read += oi.CompressedPageSize(p)
				}
			}
		}
		rows := make([]Reading, to-from)
		r := parquet.NewGenericRowGroupReader[Reading](g)
		if err := r.SeekToRow(from); err != nil {
			t.Fatal(err)
		}
		n, _ := r.Read(rows)
		for _, x := range rows[:n] {
			if x.ID == target {
				got = append(got, x)
			}
		}
	}
	if len(got) != 730 {
		t.Fatalf("%d rows of %s read back, want 730", len(got), target)
	}
	for d, x := range got {
		want := ReadingOf(views.Chrome, &rs[1234*730+d])
		if x.Day != want.Day || *x.Size != *want.Size || *x.Rating != *want.Rating || (x.Rank == nil) != (want.Rank == nil) || x.Store != "chrome" {
			t.Fatalf("day %d: %+v, want %+v", d, x, want)
		}
	}
	if read > 300<<10 || read*20 > int64(len(data)) {
		t.Errorf("one listing's history reads %d bytes of a file of %d: want at most 300 KiB and 5%%", read, len(data))
	}
	t.Logf("one listing's 730 days: %d bytes of a file of %d (%d rows, %d row groups)", read, len(data), len(rs), len(f.RowGroups()))
}
