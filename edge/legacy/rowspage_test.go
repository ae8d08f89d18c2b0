package legacy

import (
	"encoding/json"
	"testing"

	"github.com/edge-stats/edge/internal/jsonw/jsonwtest"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// TestRowsPageAppendsAsMarshal checks that a page of legacy rows
// (rowsPage) is written as encoding/json writes its rows, byte for byte,
// and an empty one. Each row's own encoding is checked in package
// document.
func TestRowsPageAppendsAsMarshal(t *testing.T) {
	r := replicatest.Synth(3000, nil)
	today := views.DayOf(r.Info().ReadingsMark)
	page := legacyPage{Total: 3000, Page: 2, PageSize: 50}
	var pageOf []*views.Listing
	for i := range 50 {
		l := r.At(int32(i * 7))
		page.Rows = append(page.Rows, document.NewLegacyRow(l, today))
		pageOf = append(pageOf, l)
	}
	jsonwtest.Check(t, "a page", page, &rowsPage{total: 3000, page: 2, pageSize: 50, listings: pageOf, today: today})
	jsonwtest.Check(t, "an empty page", legacyPage{Rows: []document.LegacyRow{}}, &rowsPage{})
}

// legacyPage is the answer of /api/extensions as a Go value, which
// rowsPage writes without building.
type legacyPage struct {
	Total    int                  `json:"total"`
	Page     int                  `json:"page"`
	PageSize int                  `json:"pageSize"`
	Rows     []document.LegacyRow `json:"rows"`
}

// BenchmarkPageEncoding writes a page of 50 legacy rows as an uncached
// /api/extensions did (a Row built per listing, then encoding/json) and
// as it does (rowsPage), and the encoding alone of rows built.
func BenchmarkPageEncoding(b *testing.B) {
	r := replicatest.Synth(10000, nil)
	today := views.DayOf(r.Info().ReadingsMark)
	var ls []*views.Listing
	for i := range 50 {
		ls = append(ls, r.At(int32(i*97)))
	}
	b.Run("rows-encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			page := legacyPage{Total: 10000, Page: 1, PageSize: 50, Rows: make([]document.LegacyRow, len(ls))}
			for i, l := range ls {
				page.Rows[i] = document.NewLegacyRow(l, today)
			}
			if _, err := json.Marshal(&page); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The encoding alone of rows already built.
	built := legacyPage{Total: 10000, Page: 1, PageSize: 50}
	for _, l := range ls {
		built.Rows = append(built.Rows, document.NewLegacyRow(l, today))
	}
	b.Run("built-encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(&built); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("built-AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = buf[:0]
			for i := range built.Rows {
				buf = built.Rows[i].AppendJSON(buf)
			}
		}
	})
	b.Run("rowsPage", func(b *testing.B) {
		p := rowsPage{total: 10000, page: 1, pageSize: 50, listings: ls, today: today}
		b.ReportAllocs()
		var buf []byte
		for b.Loop() {
			buf = p.AppendJSON(buf[:0])
		}
	})
}
