package views

import (
	"reflect"
	"testing"
)

func TestSparklineRoundTrip(t *testing.T) {
	for _, pts := range [][]SparkPoint{
		nil,
		{{Day: 20000, Value: 0}},
		{{Day: 20000, Value: 5}, {Day: 20001, Value: 3}, {Day: 20005, Value: 1 << 40}, {Day: 20089, Value: 0}},
		{{Day: -3, Value: 7}, {Day: 2, Value: -1}},
	} {
		var h History
		h.SetSparkline(EncodeSparkline(pts))
		var got []SparkPoint
		h.Sparkline(func(p SparkPoint) { got = append(got, p) })
		if !reflect.DeepEqual(got, pts) {
			t.Errorf("round trip of %v gave %v", pts, got)
		}
	}
	// A point costs a few bytes, not a struct.
	var pts []SparkPoint
	for d := range SparkDays {
		pts = append(pts, SparkPoint{Day: Day(20000 + d), Value: int64(1000 + d*3)})
	}
	if n := len(EncodeSparkline(pts)); n > 3*SparkDays {
		t.Errorf("90 points take %d bytes", n)
	}
}
