package legacy

import (
	"encoding/json"
	"testing"

	"github.com/edge-stats/edge/edge/jsonw/jsonwtest"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

// TestRowAppendsAsMarshal checks that the hand-written encoding of legacy
// rows and of a page of them (rowsPage) is encoding/json's, byte for byte, for every
// listing of a synthetic replica (every store, growth windows,
// sparklines), listings with text to escape, and rows with every value
// missing.
func TestRowAppendsAsMarshal(t *testing.T) {
	r := replicatest.Synth(3000, nil)
	today := views.DayOf(r.Info().ReadingsMark)
	page := legacyPage{Total: 3000, Page: 2, PageSize: 50}
	var pageOf []*views.Listing
	var growth, spark bool
	for i := range r.Len() {
		l := r.At(int32(i))
		row := NewRow(l, today)
		jsonwtest.CheckSelf(t, l.Store.String()+"/"+l.ID, &row)
		growth = growth || row.G7 != nil
		spark = spark || len(row.SP) > 0
		if len(page.Rows) < 50 {
			page.Rows = append(page.Rows, row)
			pageOf = append(pageOf, l)
		}
		if i%97 == 0 {
			odd := *l
			o := jsonwtest.OddText
			odd.Name, odd.Developer, odd.Description, odd.Category, odd.Version, odd.Icon = o, o, o, o, o, o
			row := NewRow(&odd, today)
			jsonwtest.CheckSelf(t, "odd "+l.ID, &row)
		}
	}
	if !growth || !spark {
		t.Errorf("growth %v, sparklines %v: the comparison did not reach both", growth, spark)
	}
	var none views.Listing
	row := NewRow(&none, today)
	jsonwtest.CheckSelf(t, "a listing of zero values", &row)
	row.SP = nil
	jsonwtest.CheckSelf(t, "no sparkline", &row)
	jsonwtest.Check(t, "a page", page, &rowsPage{total: 3000, page: 2, pageSize: 50, listings: pageOf, today: today})
	jsonwtest.Check(t, "an empty page", legacyPage{Rows: []Row{}}, &rowsPage{})
}

// legacyPage is the answer of /api/extensions as a Go value, which
// rowsPage writes without building.
type legacyPage struct {
	Total    int   `json:"total"`
	Page     int   `json:"page"`
	PageSize int   `json:"pageSize"`
	Rows     []Row `json:"rows"`
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
			page := legacyPage{Total: 10000, Page: 1, PageSize: 50, Rows: make([]Row, len(ls))}
			for i, l := range ls {
				page.Rows[i] = NewRow(l, today)
			}
			if _, err := json.Marshal(&page); err != nil {
				b.Fatal(err)
			}
		}
	})
	// The encoding alone of rows already built.
	built := legacyPage{Total: 10000, Page: 1, PageSize: 50}
	for _, l := range ls {
		built.Rows = append(built.Rows, NewRow(l, today))
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
