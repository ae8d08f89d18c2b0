package views

import (
	"math"
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

// TestGapFor checks the tolerance of a span at its bounds, and that each
// window's gap is its span's.
func TestGapFor(t *testing.T) {
	const day = 86400
	for _, c := range []struct{ span, want int64 }{
		{0, day}, {3600, 3600 + day}, {day, 2 * day}, {day + 1, day + 1 + 3*day},
		{7 * day, 10 * day}, {30 * day, 33 * day}, {30*day + 1, 37*day + 1}, {365 * day, 372 * day},
	} {
		if got := GapFor(c.span); got != c.want {
			t.Errorf("GapFor(%d) = %d, want %d", c.span, got, c.want)
		}
	}
	for _, w := range Windows {
		if w.MaxGap() != GapFor(int64(w.Days())*day) {
			t.Errorf("%s: MaxGap %d is not its span's gap", w, w.MaxGap())
		}
	}
}

// TestChartGrowth checks the change over the charts' window from the two
// sizes a load records: none without either end or for a listing that is
// not live, a NaN percent from zero.
func TestChartGrowth(t *testing.T) {
	const from, to = 1_000_000, 1_000_000 + 7*86400
	live := func(a, b int64, okA, okB bool) *Listing {
		l := &Listing{ReadAt: to + 3600}
		l.Hist.SetChartSizes(Base{Value: a}, okA, Base{Value: b}, okB)
		return l
	}
	if c, ok := live(100, 150, true, true).ChartGrowth(from, to); !ok || c.Delta != 50 || c.Percent != 50 || c.Since != from || c.To != to || c.Base.Value != 100 {
		t.Errorf("100 to 150: %+v %v", c, ok)
	}
	if c, ok := live(0, 5, true, true).ChartGrowth(from, to); !ok || c.Delta != 5 || !math.IsNaN(c.Percent) {
		t.Errorf("0 to 5: %+v %v", c, ok)
	}
	for name, l := range map[string]*Listing{"no start": live(0, 5, false, true), "no end": live(1, 5, true, false)} {
		if c, ok := l.ChartGrowth(from, to); ok {
			t.Errorf("%s: %+v", name, c)
		}
	}
	gone := live(1, 5, true, true)
	gone.Delisted = to
	if c, ok := gone.ChartGrowth(from, to); ok {
		t.Errorf("delisted: %+v", c)
	}
}
