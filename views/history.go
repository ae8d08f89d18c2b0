package views

import (
	"bytes"
	"encoding/binary"
	"math"
	"time"
)

// Window is a growth window.
type Window uint8

// The growth windows. Size growth has all four; rating-count growth has
// the first two.
const (
	Window1d Window = iota
	Window7d
	Window30d
	Window365d
	numWindows
)

// Days returns the window's length in days.
func (w Window) Days() int { return [...]int{1, 7, 30, 365}[w] }

// String returns the window's API name, such as "7d".
func (w Window) String() string { return [...]string{"1d", "7d", "30d", "365d"}[w] }

// Tolerance is how much longer than the window the two readings around
// an end of the window may lie apart: ToleranceFor its length.
func (w Window) Tolerance() time.Duration {
	return time.Duration(ToleranceFor(w.seconds())) * time.Second
}

// seconds returns the window's length in seconds.
func (w Window) seconds() int64 { return int64(w.Days()) * 86400 }

// MaxGap is how far apart, at most, the two readings a window's start is
// interpolated between may lie: GapFor its length (48 hours for 1d, 10
// days for 7d, 33 days for 30d, 372 days for 365d).
func (w Window) MaxGap() int64 { return GapFor(w.seconds()) }

// ToleranceFor returns how much longer than a span of span seconds the
// two readings around one of its ends may lie apart: a day for spans up
// to a day, three days up to 30 days, a week beyond. Small listings are
// read every third day, so a reading at least a week old lies 7 to 10
// days back: three days keeps their weekly figure and still refuses an
// end read weeks away from it.
func ToleranceFor(span int64) int64 {
	switch {
	case span <= 86400:
		return 86400
	case span <= 30*86400:
		return 3 * 86400
	default:
		return 7 * 86400
	}
}

// GapFor returns how far apart, at most, the two readings around an end
// of a span of span seconds may lie for ValueAt: the span plus
// ToleranceFor it. Any listing whose newest reading at least a span
// before an end lies within that of its oldest reading after it has a
// value there.
func GapFor(span int64) int64 { return span + ToleranceFor(span) }

// ChartDays is the length of the window the trending and rising charts
// rank by, in days.
const ChartDays = 7

// ChartLag is how long before the data's now the charts' window ends:
// three days, the slowest regular reading cadence (small listings are
// read every third day), so that nearly every listing has a reading on
// each side of the end, which ValueAt needs. A day would leave out the
// two thirds of small listings not read in the last day, a different
// two thirds each day (bench/README.md, Charts' window).
const ChartLag = 72 * time.Hour

// Windows lists the size growth windows.
var Windows = [...]Window{Window1d, Window7d, Window30d, Window365d}

// Reading is a figure as read at a time (unix seconds); At is zero for
// none.
type Reading struct {
	Value int64
	At    int64
}

// Base is a figure at the start of a window (or at the climb's reference
// time): its value, the reading at or before the instant it comes from
// (At), and, when the instant falls between two readings, the reading
// after it (After; zero when the reading at At falls on the instant, or
// for the climb's base, which is the newest reading at or before its
// time). At is zero when there is no base.
type Base struct {
	Value int64
	At    int64 // unix seconds
	After int64 // unix seconds; 0: not interpolated
}

// ValueAt is the one rule for a figure at an instant every surface uses:
// the reading itself when one falls on the instant; else the straight
// line between the newest reading before it and the oldest after it,
// rounded to the nearest whole, when the two lie at most maxGap seconds
// apart; else none (ok false).
func ValueAt(instant int64, before, after Reading, maxGap int64) (Base, bool) {
	f, ok := Between(instant, before.At, after.At, maxGap)
	switch {
	case !ok:
		return Base{}, false
	case f == 0:
		return Base{Value: before.Value, At: before.At}, true
	}
	v := float64(before.Value) + f*float64(after.Value-before.Value)
	return Base{Value: int64(math.Round(v)), At: before.At, After: after.At}, true
}

// Between is ValueAt's rule for where an instant lies between two
// readings' times (unix seconds, 0 for none): 0 when the reading before
// falls on it, else the fraction of the way from before to after, when
// before < instant < after and the two lie at most maxGap apart; ok is
// false otherwise. A figure that is not a whole number (a rating) is
// before + f × (after − before).
func Between(instant, before, after, maxGap int64) (f float64, ok bool) {
	switch {
	case before == 0:
		return 0, false
	case before == instant:
		return 0, true
	case after == 0 || after <= instant || before > instant || after-before > maxGap:
		return 0, false
	}
	return float64(instant-before) / float64(after-before), true
}

// Valid reports whether there is a base reading.
func (b Base) Valid() bool { return b.At != 0 }

// History is what the views need from a listing's past, loaded by the
// analytics package in set-based queries.
//
// Growth over a window is the value now (the newest reading) minus the
// value exactly one window before the newest reading (ValueAt); it is
// null without one. Size is the usage figure, or on apple the rating
// count.
type History struct {
	sizeValue   [numWindows]int64
	sizeAt      [numWindows]uint32 // unix seconds; 0 = no base
	sizeAfter   [numWindows]uint32 // the reading after the start, when interpolated
	ratingValue [2]int64
	ratingAt    [2]uint32
	ratingAfter [2]uint32
	chartSizes  [2]int64 // 1 + the size at the charts' from and to (replica.Info.ChartTo); 0 = none
	climbValue  int64    // size as of the climb reference time (see Replica.ClimbAt)
	climbAt     uint32   // when that reading was taken; 0 = none
	computedAt  uint32   // when these figures were last recomputed
	spark       []byte   // encoded sparkline, see Sparkline
}

// SetSizeBase records the size base of window w.
func (h *History) SetSizeBase(w Window, b Base) {
	h.sizeValue[w], h.sizeAt[w], h.sizeAfter[w] = b.Value, unix32(b.At), unix32(b.After)
}

// SizeBase returns the size base of window w.
func (h *History) SizeBase(w Window) Base {
	return Base{h.sizeValue[w], int64(h.sizeAt[w]), int64(h.sizeAfter[w])}
}

// SetRatingBase records the rating-count base of window w (1d or 7d).
func (h *History) SetRatingBase(w Window, b Base) {
	h.ratingValue[w], h.ratingAt[w], h.ratingAfter[w] = b.Value, unix32(b.At), unix32(b.After)
}

// RatingBase returns the rating-count base of window w (1d or 7d).
func (h *History) RatingBase(w Window) Base {
	if w > Window7d {
		return Base{}
	}
	return Base{h.ratingValue[w], int64(h.ratingAt[w]), int64(h.ratingAfter[w])}
}

// SetChartSizes records the size at the two ends of the charts' window
// (replica.Info.ChartTo), each by ValueAt; ok false for none.
func (h *History) SetChartSizes(from Base, fromOK bool, to Base, toOK bool) {
	h.chartSizes = [2]int64{plusOne(from.Value, fromOK), plusOne(to.Value, toOK)}
}

// ChartGrowth returns l's size change over the charts' window, from
// instant from to instant to (unix seconds, replica.Info.ChartTo and
// ChartDays before it), each end's size by ValueAt; ok is false when an
// end has none, and for a listing that is not live.
func (l *Listing) ChartGrowth(from, to int64) (Change, bool) {
	start, okFrom := minusOne(l.Hist.chartSizes[0])
	end, okTo := minusOne(l.Hist.chartSizes[1])
	if !okFrom || !okTo || !l.Live() {
		return Change{}, false
	}
	c := Change{Delta: end - start, Since: from, To: to, Base: Base{Value: start, At: from}, Percent: math.NaN()}
	if start != 0 {
		c.Percent = float64(c.Delta) / float64(start) * 100
	}
	return c, true
}

// SetClimbBase records the size as of the climb reference time.
func (h *History) SetClimbBase(b Base) { h.climbValue, h.climbAt = b.Value, unix32(b.At) }

// ClimbBase returns the size as of the climb reference time.
func (h *History) ClimbBase() Base { return Base{Value: h.climbValue, At: int64(h.climbAt)} }

// SetComputedAt records as of when the history was loaded: the data's
// newest reading then (the legacy lc), not the clock, so that edges
// reading the same data agree.
func (h *History) SetComputedAt(t time.Time) { h.computedAt = unix32(t.Unix()) }

// ComputedAt returns when the history was loaded, or the zero time.
func (h *History) ComputedAt() time.Time {
	if h.computedAt == 0 {
		return time.Time{}
	}
	return time.Unix(int64(h.computedAt), 0).UTC()
}

func unix32(sec int64) uint32 {
	if sec <= 0 || sec > 1<<32-1 {
		return 0
	}
	return uint32(sec)
}

// Change is a growth figure: the change over a window that ends with the
// newest reading and starts exactly one window before it, its percent of
// the start, and the start: its instant (Since) and the readings it comes
// from (Base).
type Change struct {
	Delta   int64
	Percent float64 // of the start; NaN when it is zero
	Since   int64   // unix seconds: the window's start, its length before To
	To      int64   // unix seconds: the window's end, the newest reading
	Base    Base    // the start's value and readings
}

// Interpolated reports whether the window's start lies between two
// readings, its value on the line between them.
func (c Change) Interpolated() bool { return c.Base.After != 0 }

// change returns l's figure now minus its value at the start of w; ok is
// false without a start (see ValueAt) or a value now, and for a listing
// that is not live.
func change(l *Listing, w Window, now int64, nowOK bool, b Base) (Change, bool) {
	if !nowOK || !b.Valid() || !l.Live() {
		return Change{}, false
	}
	c := Change{Delta: now - b.Value, Since: l.ReadAt - int64(w.Days())*86400, To: l.ReadAt, Base: b, Percent: math.NaN()}
	if b.Value != 0 {
		c.Percent = float64(c.Delta) / float64(b.Value) * 100
	}
	return c, true
}

// SizeGrowth returns l's size change over w.
func (l *Listing) SizeGrowth(w Window) (Change, bool) {
	now, ok := l.Size()
	return change(l, w, now, ok, l.Hist.SizeBase(w))
}

// RatingGrowth returns l's rating-count change over w (1d or 7d). Apple
// has none: its size already is its rating count.
func (l *Listing) RatingGrowth(w Window) (Change, bool) {
	if l.Store == Apple || w > Window7d {
		return Change{}, false
	}
	now, ok := l.RatingCount()
	return change(l, w, now, ok, l.Hist.RatingBase(w))
}

// SparkDays is how many days a sparkline covers.
const SparkDays = 90

// SparkPoint is one day of a sparkline.
type SparkPoint struct {
	Day   Day
	Value int64
}

// EncodeSparkline packs points (oldest first, one per day) into bytes:
// varint day gaps and zigzag varint value changes, a few bytes a point.
// The result is exactly as long as it needs to be: a replica holds one
// per listing.
func EncodeSparkline(points []SparkPoint) []byte {
	if len(points) == 0 {
		return nil
	}
	var scratch [20 * (SparkDays + 1)]byte
	buf := scratch[:0]
	var prevDay Day
	var prevVal int64
	for i, p := range points {
		if i == 0 {
			buf = binary.AppendVarint(buf, int64(p.Day))
		} else {
			buf = binary.AppendUvarint(buf, uint64(p.Day-prevDay))
		}
		buf = binary.AppendVarint(buf, p.Value-prevVal)
		prevDay, prevVal = p.Day, p.Value
	}
	return bytes.Clone(buf)
}

// Sparkline calls fn with each day of l's sparkline, oldest first.
func (h *History) Sparkline(fn func(SparkPoint)) {
	b := h.spark
	var day Day
	var val int64
	for i := 0; len(b) > 0; i++ {
		if i == 0 {
			d, n := binary.Varint(b)
			if n <= 0 {
				return
			}
			day, b = Day(d), b[n:]
		} else {
			d, n := binary.Uvarint(b)
			if n <= 0 {
				return
			}
			day, b = day+Day(d), b[n:]
		}
		v, n := binary.Varint(b)
		if n <= 0 {
			return
		}
		val, b = val+v, b[n:]
		fn(SparkPoint{day, val})
	}
}

// SetSparkline stores an encoded sparkline (see EncodeSparkline).
func (h *History) SetSparkline(enc []byte) { h.spark = enc }

// SparklineBytes returns where h keeps its encoded sparkline, so that a
// replica can move the bytes into its pack (package replica) and point h
// at them.
func (h *History) SparklineBytes() *[]byte { return &h.spark }
