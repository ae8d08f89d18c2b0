package series

import (
	"slices"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
)

const d0 = views.Day(20000)

func p[T any](v T) *T { return &v }

// daily returns readings of usage sizes on consecutive days from d0; a
// negative size is a day without a reading.
func daily(sizes ...int64) []Reading {
	var rs []Reading
	for i, s := range sizes {
		if s < 0 {
			continue
		}
		d := d0 + views.Day(i)
		rs = append(rs, Reading{Day: d, At: d.Time().Add(time.Hour), Crawls: 1, Usage: p(s)})
	}
	return rs
}

func TestAt(t *testing.T) {
	rs := daily(10, 11, -1, -1, 14)
	for _, tc := range []struct {
		day  views.Day
		want int64 // -1: none
	}{
		{d0 - 1, -1},
		{d0, 10},
		{d0 + 2, 11}, // the latest before the day, within the lookback
		{d0 + 4, 14},
		{d0 + 4 + Lookback, 14},
		{d0 + 5 + Lookback, -1}, // older than the lookback: no reading
	} {
		r := At(rs, tc.day)
		if (r == nil) != (tc.want < 0) || r != nil && *r.Usage != tc.want {
			t.Errorf("At(%v): %+v, want %d", tc.day, r, tc.want)
		}
	}
}

func TestDelta(t *testing.T) {
	if Delta[int64](nil, p(int64(3))) != nil || Delta(p(int64(3)), nil) != nil {
		t.Error("a missing end gives a change")
	}
	c := Delta(p(int64(200)), p(int64(150)))
	if c.Change != -50 || c.Percent == nil || *c.Percent != -25 {
		t.Errorf("200 to 150: %+v", c)
	}
	if c := Delta(p(int64(0)), p(int64(5))); c.Change != 5 || c.Percent != nil {
		t.Errorf("from 0: %+v, want no percent", c)
	}
	if c := Delta(p(4.5), p(4.25)); c.Change != -0.25 || *c.Percent != -5.56 {
		t.Errorf("rating: %+v %v", c, *c.Percent)
	}
}

func TestAlignAndEnds(t *testing.T) {
	rs := daily(-1, 5, -1, 7, 8)
	rs = append(rs, Reading{Day: d0 + 9, Crawls: 1}) // no size
	a := Align(rs, d0, d0+9)
	if len(a) != 10 || a[0] != nil || *a[1].Usage != 5 || a[2] != nil || *a[4].Usage != 8 || a[9] == nil {
		t.Fatalf("aligned: %v", a)
	}
	first, last, ok := Ends(a, views.Chrome)
	if !ok || first != 1 || last != 4 {
		t.Errorf("ends %d %d %v; want 1 4 (the last reading has no size)", first, last, ok)
	}
	if _, _, ok := Ends(Align(nil, d0, d0+3), views.Chrome); ok {
		t.Error("ends of an empty series")
	}
	if Align(rs, d0+1, d0) != nil {
		t.Error("a window that ends before it starts")
	}
}

func flagsOf(f []DayFlags) map[int][]string {
	out := map[int][]string{}
	for i, x := range f {
		if x.Flags != nil {
			out[i] = x.Flags
		}
	}
	return out
}

func TestFlag(t *testing.T) {
	steady := func(n int, start int64, pct float64) []int64 {
		out := make([]int64, n)
		v := float64(start)
		for i := range out {
			out[i] = int64(v)
			v *= 1 + pct/100
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		sizes    []int64
		relisted []views.Day
		want     map[int][]string // by index of the reading
	}{
		{"steady growth: nothing", steady(30, 5000, 2), nil, map[int][]string{}},
		{"a gap", daily0(10, 11, 12, -1, -1, 14, 15), nil, map[int][]string{3: {FlagGap}}},
		{"read every third day: no gap", daily0(10, -1, -1, 11, -1, -1, 12, -1, -1, 13), nil, map[int][]string{}},
		{"read every third day, then a week without", daily0(10, -1, -1, 11, -1, -1, 12, -1, -1, -1, -1, -1, -1, 13, -1, -1, 14), nil, map[int][]string{3: {FlagGap}}},
		{"a jump", append(steady(10, 5000, 1), 20000, 20100), nil, map[int][]string{10: {FlagJump}}},
		{"a small listing doubling is not a jump", []int64{5, 6, 5, 12, 11, 10}, nil, map[int][]string{}},
		{"a noisy listing's usual day is not a jump", []int64{1000, 1600, 1100, 1700, 1000, 1500, 1100}, nil, map[int][]string{}},
		{"rounding from exact to round", []int64{1234567, 1235001, 1200000, 1300000}, nil, map[int][]string{2: {FlagRounding}}},
		{"one round figure is not rounding", []int64{123456, 123457, 123000, 123461, 123470}, nil, map[int][]string{}},
		{"rounding back to exact", []int64{1200000, 1200000, 1203457, 1204001}, nil, map[int][]string{2: {FlagRounding}}},
		{"relisted", []int64{100, 101, 102}, []views.Day{d0 + 1}, map[int][]string{1: {FlagRelisted}}},
		{"relisted on a day without a reading", daily0(100, 101, -1, 102, 103), []views.Day{d0 + 2}, map[int][]string{2: {FlagGap, FlagRelisted}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := daily(tc.sizes...)
			got := flagsOf(Flag(views.Chrome, rs, tc.relisted))
			if len(got) != len(tc.want) {
				t.Fatalf("flags %v, want %v", got, tc.want)
			}
			for i, w := range tc.want {
				if !slices.Equal(got[i], w) {
					t.Errorf("reading %d: %v, want %v (all: %v)", i, got[i], w, got)
				}
			}
		})
	}
}

// daily0 is its arguments, for readability in tables.
func daily0(v ...int64) []int64 { return v }

func TestFlagDaysSincePrevious(t *testing.T) {
	f := Flag(views.Apple, daily(1, -1, -1, 4), nil)
	if f[0].DaysSincePrevious != 0 || f[1].DaysSincePrevious != 3 {
		t.Errorf("%+v", f)
	}
	// On apple the size is the ratings count: usage alone gives no jump.
	rs := daily(10, 10, 10, 100000)
	if got := flagsOf(Flag(views.Apple, rs, nil)); len(got) != 0 {
		t.Errorf("apple, usage only: %v", got)
	}
}

func TestGranularity(t *testing.T) {
	for v, want := range map[int64]int64{0: 1, 7: 1, 10: 10, 1200: 100, 5_000_000: 1_000_000, 30_000_000: 1_000_000} {
		if g := granularity(v); g != want {
			t.Errorf("granularity(%d) = %d, want %d", v, g, want)
		}
	}
}
