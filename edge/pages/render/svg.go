package render

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Point is one day of the size chart: the day (yyyy-MM-dd) and the day's
// size; Has is false on a day without one.
type Point struct {
	Day  string
	Size int64
	Has  bool
	Jump bool // the size moved more than the listing's history makes plausible (flags.jump)
}

// JoinDays is how many days apart, at most, two readings the chart joins
// with a line may lie: the span over which the 7-day growth figure itself
// takes the size between two readings (7 days and its tolerance of 3).
// A listing read every third day is drawn as a line; a longer silence
// breaks it, and the page says where.
const JoinDays = 10

// Gap is a stretch of days without a reading that the chart's line does
// not cross: the days after From up to To, both readings' days.
type Gap struct {
	From, To string
	Days     int
}

// Gaps returns the stretches longer than JoinDays between two days with a
// size, oldest first.
func Gaps(points []Point) []Gap {
	var out []Gap
	last := -1
	for i, p := range points {
		if !p.Has {
			continue
		}
		if last >= 0 && i-last > JoinDays {
			out = append(out, Gap{From: points[last].Day, To: p.Day, Days: i - last})
		}
		last = i
	}
	return out
}

// niceStep returns a step of 1, 2, 2.5 or 5 times a power of ten, at
// least raw.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}

// Ticks returns the y axis's values for a series from lo to hi: equal
// nice steps (1, 2, 2.5 or 5 times a power of ten, about four of them)
// from the step at or below lo to the first at or above hi, so that a
// series that moves a few percent reads as moving (live apple listings
// 7,980 to 8,465, not a flat line on an axis from 0). A constant series
// gets a step of a tenth of its value around it. Ranked, the values are
// ranks, which start at 1: an axis that would start at 0 starts at 1 and
// steps on from there (1, 11, 21, ...), still even; a rank axis spans
// minRankSpan places at least.
func Ticks(lo, hi int64, ranked bool) []int64 {
	if ranked && hi-lo < minRankSpan || !ranked && hi > lo && hi-lo < minRankSpan {
		// A rank that swaps places with a neighbour day by day (3, 4, 3),
		// or a count that moves by one (7, 8), would fill the chart: the
		// axis spans minRankSpan places or units at least.
		floor := int64(0)
		if ranked {
			floor = 1
		}
		lo = max(floor, lo-(minRankSpan-(hi-lo))/2)
		hi = lo + minRankSpan
	}
	span := float64(hi - lo)
	if span <= 0 {
		span = math.Max(float64(hi)/10, 1) * 4
	}
	step := int64(math.Max(1, niceStep(span/4)))
	first := lo / step * step
	if hi == lo && first == lo && first >= step { // a constant series on a tick: one below it too
		first -= step
	}
	if ranked && first < 1 {
		first = 1
	}
	out := []int64{first}
	for v := first + step; ; v += step {
		out = append(out, v)
		if v > hi || v == hi && hi != lo { // a constant series has a tick above it too
			return out
		}
	}
}

// minRankSpan is the fewest places a rank axis spans, and the fewest
// units an axis of a series that moves does.
const minRankSpan = 8

// Compact formats n for an axis: 950, 12k, 1.5M, 2B.
func Compact(n int64) string {
	for _, u := range []struct {
		div  float64
		unit string
	}{{1e9, "B"}, {1e6, "M"}, {1e3, "k"}} {
		if math.Abs(float64(n)) >= u.div {
			return strconv.FormatFloat(math.Round(float64(n)/u.div*10)/10, 'f', -1, 64) + u.unit
		}
	}
	return strconv.FormatInt(n, 10)
}

// chart draws the size series as an inline SVG: a line through the days
// with a size, joined across days without one when the readings lie at
// most JoinDays apart and broken beyond, from an axis at 0 with labelled
// gridlines, and the first, middle and last days below. It is drawn in a
// viewBox, so that it scales to the screen's width.
func chart(points []Point, measure string) template.HTML {
	label := "Size (" + measure + "), daily"
	if len(points) > 0 {
		label += ", " + points[0].Day + " to " + points[len(points)-1].Day
	}
	var jumps []string
	for _, p := range points {
		if p.Has && p.Jump {
			jumps = append(jumps, p.Day)
		}
	}
	if len(jumps) > 0 {
		label += "; ringed, a jump on " + strings.Join(jumps, ", ")
	}
	return lineChart(points, label, sizeAxis)
}

// rankChart draws a listing's daily rank (in its store or its category:
// label says which) as chart draws its size, rank 1 at the top; its
// label adds the best and the latest rank.
func rankChart(points []Point, label string) template.HTML {
	best, latest := Point{}, Point{}
	for _, p := range points {
		if p.Has {
			if !best.Has || p.Size < best.Size {
				best = p
			}
			latest = p
		}
	}
	if best.Has {
		label += fmt.Sprintf(", %s to %s: best %d on %s, latest %d on %s", points[0].Day, points[len(points)-1].Day, best.Size, best.Day, latest.Size, latest.Day)
	}
	return lineChart(points, label, rankAxis)
}

// axis is what a line chart's values are: sizes, ranks (the best at the
// top) or ratings (in hundredths of a star).
type axis uint8

const (
	sizeAxis axis = iota
	rankAxis
	ratingAxis
)

// ratingChart draws a listing's daily average rating (Size holds it in
// hundredths) as chart draws its size, on an axis of the ratings' range.
func ratingChart(points []Point) template.HTML {
	label := "Average rating, daily"
	if len(points) > 0 {
		label += ", " + points[0].Day + " to " + points[len(points)-1].Day
	}
	return lineChart(points, label, ratingAxis)
}

// lineChart draws points as chart says, labelled label, on an axis of
// the kind ax: a rank axis runs from the best rank at the top down.
func lineChart(points []Point, label string, ax axis) template.HTML {
	ranked := ax == rankAxis
	const w, h, left, right, bottom, top = 420.0, 220.0, 46.0, 8.0, 22.0, 10.0
	var lo, hi int64
	n := 0
	for _, p := range points {
		if p.Has {
			if n == 0 || p.Size < lo {
				lo = p.Size
			}
			hi = max(hi, p.Size)
			n++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, w, h, template.HTMLEscapeString(label))
	if n == 0 {
		what := [...]string{"size", "rank", "rating"}[ax]
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">No %s was read in these days.</text></svg>`, w/2, h/2, what)
		return template.HTML(b.String())
	}
	ticks := Ticks(lo, hi, ranked)
	bot, top0 := float64(ticks[0]), float64(ticks[len(ticks)-1])
	x := func(i int) float64 {
		if len(points) == 1 {
			return left + (w-left-right)/2
		}
		return left + float64(i)*(w-left-right)/float64(len(points)-1)
	}
	y := func(v int64) float64 { return top + (h-top-bottom)*(1-(float64(v)-bot)/(top0-bot)) }
	if ranked { // rank 1 at the top
		y = func(v int64) float64 { return top + (h-top-bottom)*(float64(v)-bot)/(top0-bot) }
	}
	for _, t := range ticks {
		fmt.Fprintf(&b, `<line class="grid" x1="%g" y1="%.1f" x2="%g" y2="%.1f"/>`, left, y(t), w-right, y(t))
		fmt.Fprintf(&b, `<text class="tick" x="%g" y="%.1f" text-anchor="end">%s</text>`, left-5, y(t)+3.5, valueLabel(t, ax, true))
	}
	dayLabels(&b, points, x, h-6)
	var path strings.Builder
	prev := -1
	for i, p := range points {
		if !p.Has {
			continue
		}
		cmd := "M"
		if prev >= 0 && i-prev <= JoinDays {
			cmd = "L"
		}
		fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, x(i), y(p.Size))
		prev = i
	}
	fmt.Fprintf(&b, `<path class="line" d="%s"/>`, strings.TrimSpace(path.String()))
	// A reading no line reaches is drawn as a dot.
	prev = -1
	for i, p := range points {
		if !p.Has {
			continue
		}
		next := slices.IndexFunc(points[i+1:], func(q Point) bool { return q.Has })
		if (prev < 0 || i-prev > JoinDays) && (next < 0 || next+1 > JoinDays) {
			fmt.Fprintf(&b, `<circle class="dot" cx="%.1f" cy="%.1f" r="2.5"/>`, x(i), y(p.Size))
		}
		prev = i
	}
	pointValues(&b, points, x, y, top, ax)
	// A jump is ringed: the reader sees where to doubt the line.
	for i, p := range points {
		if p.Has && p.Jump && !ranked {
			fmt.Fprintf(&b, `<circle class="jump" cx="%.1f" cy="%.1f" r="5"/>`, x(i), y(p.Size))
		}
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// pointValues writes each reading's day and value, readable without
// script: a point's title (shown on hover, read by screen readers), one
// for each run of days with the same value (a rank or a rating that
// holds for weeks is one point, "9 Feb 2026 to 3 Mar 2026: rank 3", not
// a point a day: a year of four charts would be some 1,500 elements);
// the first and the last values are written on the chart, below their
// point when it is at the top edge.
func pointValues(b *strings.Builder, points []Point, x func(int) float64, y func(int64) float64, top float64, ax axis) {
	first, last := -1, -1
	b.WriteString(`<g class="pt">`)
	for i := 0; i < len(points); i++ {
		p := points[i]
		if !p.Has {
			continue
		}
		if first < 0 {
			first = i
		}
		end := i // the run of days from i with p's value
		for end+1 < len(points) && points[end+1].Has && titleValue(points[end+1].Size, ax) == titleValue(p.Size, ax) {
			end++
		}
		last = end
		days := shortDay(p.Day)
		if end > i {
			days += " to " + shortDay(points[end].Day)
		}
		fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="4"><title>%s: %s</title></circle>`, x(i), y(p.Size), days, valueWords(titleValue(p.Size, ax), ax))
		i = end
	}
	b.WriteString(`</g>`)
	endLabel := func(i int, anchor string) {
		ly := y(points[i].Size) - 7
		if ly < top+4 {
			ly = y(points[i].Size) + 14
		}
		fmt.Fprintf(b, `<text class="end" x="%.1f" y="%.1f" text-anchor="%s">%s</text>`, x(i), ly, anchor, valueLabel(points[i].Size, ax, false))
	}
	endLabel(first, "start")
	if last != first {
		endLabel(last, "end")
	}
}

// titleValue is the value a point's title gives: v, but a rating to a
// tenth of a star (in hundredths), as the stores show it, so that a
// rating that drifts by hundredths day by day is one point a run of the
// same tenth, not a point a day (its line and end labels keep the
// hundredths).
func titleValue(v int64, ax axis) int64 {
	if ax == ratingAxis {
		return (v + 5) / 10 * 10
	}
	return v
}

// valueWords is a point's value in a title: 12,345, "rank 12" or
// "4.4 stars".
func valueWords(v int64, ax axis) string {
	switch ax {
	case rankAxis:
		return "rank " + Int(v)
	case ratingAxis:
		return strconv.FormatFloat(float64(v)/100, 'f', 1, 64) + " stars"
	}
	return Int(v)
}

// valueLabel is a value on the chart: 12.3k, #12 or 4.37 beside a point,
// 12.3k, 12 or 4.3 on the axis (tick).
func valueLabel(v int64, ax axis, tick bool) string {
	switch {
	case ax == rankAxis && tick:
		return Compact(v)
	case ax == rankAxis:
		return "#" + Int(v)
	case ax == ratingAxis:
		return strconv.FormatFloat(float64(v)/100, 'f', -1, 64)
	}
	return Compact(v)
}

// dayLabels writes the first, middle and last days of points below a
// chart, at height y, each at its x.
func dayLabels(b *strings.Builder, points []Point, x func(int) float64, y float64) {
	days := []int{0}
	if len(points) > 2 {
		days = append(days, len(points)/2)
	}
	if len(points) > 1 {
		days = append(days, len(points)-1)
	}
	for k, i := range days {
		anchor := "middle"
		switch {
		case k == 0 && len(days) > 1:
			anchor = "start"
		case k == len(days)-1 && len(days) > 1:
			anchor = "end"
		}
		fmt.Fprintf(b, `<text x="%.1f" y="%g" text-anchor="%s">%s</text>`, x(i), y, anchor, shortDay(points[i].Day))
	}
}

// shortDay formats yyyy-MM-dd as "2 Mar 2026".
func shortDay(day string) string {
	t, err := time.Parse(time.DateOnly, day)
	if err != nil {
		return day
	}
	return t.Format("2 Jan 2006")
}
