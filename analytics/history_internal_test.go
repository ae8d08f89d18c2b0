package analytics

import (
	"slices"
	"testing"

	"github.com/edge-stats/edge/views"
)

// TestSparkDays checks how a listing's readings of the sparkline days
// become its points: the latest reading of each day that has a size, in
// day order, whatever order the readings come in.
func TestSparkDays(t *testing.T) {
	const d0 = 20000 * 86400 // midnight UTC starting day 20000
	tests := []struct {
		name  string
		at    []uint32
		sizes []uint64
		want  []views.SparkPoint
	}{
		{"none", nil, nil, nil},
		{"one a day, out of order",
			[]uint32{d0 + 2*86400 + 5, d0 + 10, d0 + 86400 + 7},
			[]uint64{30, 10, 20},
			[]views.SparkPoint{{Day: 20000, Value: 10}, {Day: 20001, Value: 20}, {Day: 20002, Value: 30}}},
		{"the day's latest wins",
			[]uint32{d0 + 3600, d0 + 7200, d0 + 60},
			[]uint64{11, 12, 10},
			[]views.SparkPoint{{Day: 20000, Value: 12}}},
		{"a latest reading without a size gives way to the one before",
			[]uint32{d0 + 3600, d0 + 7200, d0 + 86400},
			[]uint64{11, noSize, 5},
			[]views.SparkPoint{{Day: 20000, Value: 11}, {Day: 20001, Value: 5}}},
		{"a day of readings without a size is left out",
			[]uint32{d0 + 3600, d0 + 86400},
			[]uint64{noSize, 5},
			[]views.SparkPoint{{Day: 20001, Value: 5}}},
		{"two at the same second: the larger",
			[]uint32{d0 + 60, d0 + 60},
			[]uint64{3, 4},
			[]views.SparkPoint{{Day: 20000, Value: 4}}},
		{"an earlier reading without a size does not",
			[]uint32{d0 + 3600, d0 + 7200},
			[]uint64{noSize, 7},
			[]views.SparkPoint{{Day: 20000, Value: 7}}},
		{"the last second of a day and the first of the next",
			[]uint32{d0 + 86399, d0 + 86400},
			[]uint64{1, 2},
			[]views.SparkPoint{{Day: 20000, Value: 1}, {Day: 20001, Value: 2}}},
	}
	var s sparkDays // reused across cases, as across listings
	for _, tc := range tests {
		got := s.points(tc.at, tc.sizes)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, tc.want)
		}
	}
}
