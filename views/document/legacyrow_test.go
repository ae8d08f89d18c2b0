package document

import (
	"slices"
	"testing"

	"github.com/edge-stats/edge/internal/jsonw/jsonwtest"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica/replicatest"
)

func TestLegacyRowNulls(t *testing.T) {
	var l views.Listing
	l.Store, l.ID, l.ReadAt, l.FirstSeen = views.Apple, "1", 10, 5
	row := NewLegacyRow(&l, 100)
	if row.I != nil || row.R != nil || row.RC != nil || row.G1 != nil || row.RG1 != nil || row.U != nil ||
		row.SP == nil || row.S != nil || row.DU != nil || row.CD != nil {
		t.Errorf("apple row without figures: %+v", row)
	}
	l.SetRatingCount(7, true) // rated count but no average: both null
	if row := NewLegacyRow(&l, 100); row.RC != nil || row.R != nil {
		t.Errorf("rc without r: %+v", row)
	}
	l.SetRating(4.25, true)
	l.Hist.SetSparkline(views.EncodeSparkline([]views.SparkPoint{{Day: 5, Value: 1}, {Day: 11, Value: 2}, {Day: 100, Value: 3}}))
	row = NewLegacyRow(&l, 100)
	if *row.R != 4.25 || *row.RC != 7 || !slices.Equal(row.SP, [][2]int64{{89, 2}, {0, 3}}) {
		t.Errorf("rated row %v %v sparkline %v", *row.R, *row.RC, row.SP)
	}
}

// TestLegacyRowAppendsAsMarshal checks that the generated encoding of
// legacy rows is encoding/json's, byte for byte, for every listing of a
// synthetic replica (every store, growth windows, sparklines), listings
// with text to escape, and rows with every value missing.
func TestLegacyRowAppendsAsMarshal(t *testing.T) {
	r := replicatest.Synth(3000, nil)
	today := views.DayOf(r.Info().ReadingsMark)
	var growth, spark bool
	for i := range r.Len() {
		l := r.At(int32(i))
		row := NewLegacyRow(l, today)
		jsonwtest.CheckSelf(t, l.Store.String()+"/"+l.ID, &row)
		growth = growth || row.G7 != nil
		spark = spark || len(row.SP) > 0
		if i%97 == 0 {
			odd := *l
			o := jsonwtest.OddText
			odd.Name, odd.Developer, odd.Description, odd.Category, odd.Version, odd.Icon = o, o, o, o, o, o
			row := NewLegacyRow(&odd, today)
			jsonwtest.CheckSelf(t, "odd "+l.ID, &row)
		}
	}
	if !growth || !spark {
		t.Errorf("growth %v, sparklines %v: the comparison did not reach both", growth, spark)
	}
	var none views.Listing
	row := NewLegacyRow(&none, today)
	jsonwtest.CheckSelf(t, "a listing of zero values", &row)
	row.SP = nil
	jsonwtest.CheckSelf(t, "no sparkline", &row)
}
