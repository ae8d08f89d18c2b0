package render

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestRankChartRunsDownFromOne: a rank chart's axis starts at 1 on its
// top edge and counts down in whole ranks, each label once, and every
// rank is drawn where its axis puts it: a listing first every day is a
// line along the top.
func TestRankChartRunsDownFromOne(t *testing.T) {
	label := regexp.MustCompile(`<text x="[^"]+" y="([^"]+)" text-anchor="end">([^<]+)</text>`)
	move := regexp.MustCompile(`[ML]([\d.]+) ([\d.]+)`)
	for _, c := range []struct {
		name  string
		ranks []int64
	}{
		{"always first", []int64{1, 1, 1, 1}},
		{"first and second", []int64{1, 2, 1, 2}},
		{"climbing", []int64{37, 20, 9, 3, 1}},
		{"low", []int64{4200, 3900, 4100}},
	} {
		var points []Point
		for i, r := range c.ranks {
			points = append(points, Point{Day: "2026-10-0" + strconv.Itoa(i+1), Size: r, Has: true})
		}
		svg := string(rankChart(points))
		var ticks []string
		at := map[string]float64{}
		for _, m := range label.FindAllStringSubmatch(svg, -1) {
			y, _ := strconv.ParseFloat(m[1], 64)
			ticks = append(ticks, m[2])
			at[m[2]] = y - 3.5
		}
		if len(ticks) < 2 || ticks[0] != "1" || at["1"] != 10 {
			t.Fatalf("%s: axis %v (1 at %v), want 1 first, on the top edge (10)", c.name, ticks, at["1"])
		}
		if len(at) != len(ticks) {
			t.Errorf("%s: a label twice: %v", c.name, ticks)
		}
		path := svg[strings.Index(svg, `<path class="line" d="`):]
		ys := move.FindAllStringSubmatch(path[:strings.Index(path, `"/>`)], -1)
		if len(ys) != len(c.ranks) {
			t.Fatalf("%s: %d points drawn, want %d", c.name, len(ys), len(c.ranks))
		}
		for i, m := range ys {
			y, _ := strconv.ParseFloat(m[2], 64)
			if c.ranks[i] == 1 && y != 10 {
				t.Errorf("%s: rank 1 drawn at %v, the axis's 1 at 10", c.name, y)
			}
			if y < 10 || y > 198 {
				t.Errorf("%s: rank %d drawn at %v, off the axis", c.name, c.ranks[i], y)
			}
			if want, ok := at[Compact(c.ranks[i])]; ok && y != want {
				t.Errorf("%s: rank %d drawn at %v, its label at %v", c.name, c.ranks[i], y, want)
			}
		}
	}
}
