package render

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestRankChartAxisFromTheData: a rank chart's axis spans the ranks
// drawn, the best on its top edge, in even steps, each label once, and
// every rank is drawn where its axis puts it: a listing first every day
// is a line along the top.
func TestRankChartAxisFromTheData(t *testing.T) {
	label := regexp.MustCompile(`<text class="tick" x="[^"]+" y="([^"]+)" text-anchor="end">([^<]+)</text>`)
	move := regexp.MustCompile(`[ML]([\d.]+) ([\d.]+)`)
	for _, c := range []struct {
		name  string
		ranks []int64
		ticks []int64
	}{
		{"always first", []int64{1, 1, 1, 1}, []int64{1, 3, 5, 7, 9}},
		{"first and second", []int64{1, 2, 1, 2}, []int64{1, 3, 5, 7, 9}}, // a swap reads as small: 8 places at least
		{"climbing", []int64{37, 20, 9, 3, 1}, []int64{1, 11, 21, 31, 41}},
		{"low", []int64{4200, 3900, 4100}, []int64{3900, 4000, 4100, 4200}},
	} {
		var points []Point
		for i, r := range c.ranks {
			points = append(points, Point{Day: "2026-10-0" + strconv.Itoa(i+1), Size: r, Has: true})
		}
		svg := string(rankChart(points, "Rank in the store, daily"))
		var ticks []string
		at := map[string]float64{}
		for _, m := range label.FindAllStringSubmatch(svg, -1) {
			y, _ := strconv.ParseFloat(m[1], 64)
			ticks = append(ticks, m[2])
			at[m[2]] = y - 3.5
		}
		var want []string
		for _, v := range c.ticks {
			want = append(want, Compact(v))
		}
		if strings.Join(ticks, " ") != strings.Join(want, " ") || at[want[0]] != 10 {
			t.Fatalf("%s: axis %v (%s at %v), want %v, the first on the top edge (10)", c.name, ticks, want[0], at[want[0]], want)
		}
		path := svg[strings.Index(svg, `<path class="line" d="`):]
		ys := move.FindAllStringSubmatch(path[:strings.Index(path, `"/>`)], -1)
		if len(ys) != len(c.ranks) {
			t.Fatalf("%s: %d points drawn, want %d", c.name, len(ys), len(c.ranks))
		}
		best := slices.Min(c.ranks)
		for i, m := range ys {
			y, _ := strconv.ParseFloat(m[2], 64)
			if c.ranks[i] == best && best == c.ticks[0] && y != 10 {
				t.Errorf("%s: the best rank drawn at %v, its label at 10", c.name, y)
			}
			if y < 10 || y > 198 {
				t.Errorf("%s: rank %d drawn at %v, off the axis", c.name, c.ranks[i], y)
			}
			if want, ok := at[Compact(c.ranks[i])]; ok && y != want {
				t.Errorf("%s: rank %d drawn at %v, its label at %v", c.name, c.ranks[i], y, want)
			}
			if !strings.Contains(svg, "rank "+Int(c.ranks[i])+"</title>") {
				t.Errorf("%s: no title says rank %d", c.name, c.ranks[i])
			}
		}
	}
}
