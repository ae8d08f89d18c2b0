package render

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
)

// CompareSeries is one listing's line in a comparison's chart: its number
// in the comparison's table (the label at its line's end) and its size on
// each day of the window (nil on a day without one).
type CompareSeries struct {
	Number int
	Size   []*int64
}

// dashes are the lines' patterns, one a listing in the table's order, so
// that lines are told apart without colour (a comparison has at most 10).
var dashes = []string{"", "7 4", "2 3", "12 4 2 4", "1 6", "9 3 3 3 3 3", "4 4", "14 3", "2 2 8 2", "5 2 1 2"}

// compareChart draws the growth of each series since its first day with a
// size, in percent, as lines over the window's days (dates, oldest
// first): one pattern a line, its number at its end, an axis through 0.
// Sizes of different stores count different things; their growth in
// percent reads on one axis.
func compareChart(dates []string, series []CompareSeries) template.HTML {
	const w, h, left, right, bottom, top = 420.0, 240.0, 46.0, 26.0, 22.0, 10.0
	pct, lo, hi, n := percents(series)
	var b strings.Builder
	label := "Growth since each listing's first day with a size, in percent"
	if len(dates) > 0 {
		label += ", " + dates[0] + " to " + dates[len(dates)-1] + "; each line ends with its number in the table below"
	}
	fmt.Fprintf(&b, `<svg class="chart" viewBox="0 0 %g %g" role="img" aria-label="%s">`, w, h, template.HTMLEscapeString(label))
	if n == 0 || len(dates) == 0 {
		fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">No size was read in these days.</text></svg>`, w/2, h/2)
		return template.HTML(b.String())
	}
	step := niceStep(math.Max(hi-lo, 1) / 4)
	lo, hi = math.Floor(lo/step)*step, math.Ceil(hi/step)*step
	if hi == lo {
		hi = lo + step
	}
	x := func(j int) float64 {
		if len(dates) == 1 {
			return left + (w-left-right)/2
		}
		return left + float64(j)*(w-left-right)/float64(len(dates)-1)
	}
	y := func(v float64) float64 { return top + (h-top-bottom)*(hi-v)/(hi-lo) }
	for t := lo; t <= hi+step/2; t += step {
		fmt.Fprintf(&b, `<line class="grid" x1="%g" y1="%.1f" x2="%g" y2="%.1f"/>`, left, y(t), w-right, y(t))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%s%%</text>`, left-5, y(t)+3.5, signedTick(t))
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="start">%s</text>`, x(0), h-6, shortDay(dates[0]))
	fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="end">%s</text>`, x(len(dates)-1), h-6, shortDay(dates[len(dates)-1]))
	var ends []lineEnd
	for i, s := range series {
		var path strings.Builder
		prev, last := -1, -1
		for j, p := range pct[i] {
			if p == nil {
				continue
			}
			cmd := "M"
			if prev >= 0 && j-prev <= JoinDays {
				cmd = "L"
			}
			fmt.Fprintf(&path, "%s%.1f %.1f ", cmd, x(j), y(*p))
			prev, last = j, j
		}
		if last < 0 {
			continue
		}
		dash := ""
		if d := dashes[i%len(dashes)]; d != "" {
			dash = ` stroke-dasharray="` + d + `"`
		}
		fmt.Fprintf(&b, `<path class="line"%s d="%s"/>`, dash, strings.TrimSpace(path.String()))
		ends = append(ends, lineEnd{y: y(*pct[i][last]), x: x(last), num: s.Number})
	}
	labelEnds(&b, ends)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// percents returns each series' sizes as a percent change from its first
// nonzero size, the lowest and highest of them (0 included), and how
// many there are.
func percents(series []CompareSeries) (pct [][]*float64, lo, hi float64, n int) {
	pct = make([][]*float64, len(series))
	for i, s := range series {
		pct[i] = make([]*float64, len(s.Size))
		var base *int64
		for j, v := range s.Size {
			if v == nil {
				continue
			}
			if base == nil {
				if *v == 0 {
					continue // growth from nothing has no percent
				}
				base = v
			}
			p := 100 * float64(*v-*base) / float64(*base)
			pct[i][j] = &p
			lo, hi = math.Min(lo, p), math.Max(hi, p)
			n++
		}
	}
	return pct, lo, hi, n
}

// lineEnd is where a line of the chart ends, and its number.
type lineEnd struct {
	x, y float64
	num  int
}

// labelEnds writes each line's number at its end, the labels kept 11
// units apart.
func labelEnds(b *strings.Builder, ends []lineEnd) {
	for i := range ends {
		for k := range i {
			if d := ends[i].y - ends[k].y; math.Abs(d) < 11 {
				ends[i].y = ends[k].y + 11
			}
		}
		fmt.Fprintf(b, `<text class="end" x="%.1f" y="%.1f">%d</text>`, ends[i].x+4, ends[i].y+4, ends[i].num)
	}
}

// signedTick writes a percent axis tick as the pages write changes: "+"
// for a gain, U+2212 for a loss, 0 bare.
func signedTick(t float64) string {
	switch {
	case t > 0:
		return "+" + strconv.FormatFloat(t, 'f', -1, 64)
	case t < 0:
		return "−" + strconv.FormatFloat(-t, 'f', -1, 64)
	}
	return "0"
}
