package legacy

import (
	"slices"
	"testing"

	"github.com/edge-stats/edge/views"
)

func TestLegacyRowNulls(t *testing.T) {
	var l views.Listing
	l.Store, l.ID, l.ReadAt, l.FirstSeen = views.Apple, "1", 10, 5
	row := NewRow(&l, 100)
	if row.I != nil || row.R != nil || row.RC != nil || row.G1 != nil || row.RG1 != nil || row.U != nil ||
		row.SP == nil || row.S != nil || row.DU != nil || row.CD != nil {
		t.Errorf("apple row without figures: %+v", row)
	}
	l.SetRatingCount(7, true) // rated count but no average: both null
	if row := NewRow(&l, 100); row.RC != nil || row.R != nil {
		t.Errorf("rc without r: %+v", row)
	}
	l.SetRating(4.25, true)
	l.Hist.SetSparkline(views.EncodeSparkline([]views.SparkPoint{{Day: 5, Value: 1}, {Day: 11, Value: 2}, {Day: 100, Value: 3}}))
	row = NewRow(&l, 100)
	if *row.R != 4.25 || *row.RC != 7 || !slices.Equal(row.SP, [][2]int64{{89, 2}, {0, 3}}) {
		t.Errorf("rated row %v %v sparkline %v", *row.R, *row.RC, row.SP)
	}
}
