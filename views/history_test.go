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

// TestValueAt holds the one rule for a figure at an instant: the reading
// on it, else the line between the readings around it when they lie at
// most the window's gap apart (rounded to the nearest whole), else none.
func TestValueAt(t *testing.T) {
	const h = 3600
	gap := Window7d.MaxGap() // 10 days
	for _, c := range []struct {
		name          string
		before, after Reading
		want          Base
		ok            bool
	}{
		{"a reading on the instant", Reading{50, 1000 * h}, Reading{80, 1010 * h}, Base{Value: 50, At: 1000 * h}, true},
		{"between two readings", Reading{100, 990 * h}, Reading{200, 1010 * h}, Base{Value: 150, At: 990 * h, After: 1010 * h}, true},
		{"a quarter of the way", Reading{100, 996 * h}, Reading{200, 1012 * h}, Base{Value: 125, At: 996 * h, After: 1012 * h}, true},
		{"rounded to the nearest", Reading{0, 999 * h}, Reading{1, 1002 * h}, Base{Value: 0, At: 999 * h, After: 1002 * h}, true},
		{"falling", Reading{300, 999 * h}, Reading{100, 1001 * h}, Base{Value: 200, At: 999 * h, After: 1001 * h}, true},
		{"readings exactly the gap apart", Reading{1, 1000*h - 1}, Reading{1, 1000*h - 1 + gap}, Base{Value: 1, At: 1000*h - 1, After: 1000*h - 1 + gap}, true},
		{"readings further apart than the gap", Reading{1, 1000*h - 1}, Reading{1, 1000*h + gap}, Base{}, false},
		{"no reading before", Reading{}, Reading{1, 1001 * h}, Base{}, false},
		{"no reading after", Reading{1, 999 * h}, Reading{}, Base{}, false},
	} {
		got, ok := ValueAt(1000*h, c.before, c.after, gap)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: %+v %v, want %+v %v", c.name, got, ok, c.want, c.ok)
		}
	}
}
