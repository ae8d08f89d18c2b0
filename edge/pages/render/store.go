package render

import (
	"fmt"
	"html/template"
	"strings"
)

// StorePage is what a store's page shows: its statistics, its newest
// takeovers and changes, the top of each chart, its categories.
type StorePage struct {
	Store      string
	AsOf       string
	Figures    []Figure
	Charts     []List
	Categories []Category
	JSONURL    string
	// Takeovers and Changes are the store's newest takeovers and newest
	// changes, newest first.
	Takeovers, Changes []Event
	// Manifests says the store's manifests are read: only then can its
	// listings widen what they may do, and so be taken over.
	Manifests bool
	// Weeks are the store's totals at the end of each weekly edition,
	// oldest first; Ratings and Sizes its live listings by rating and by
	// size, as bars.
	Weeks          []WeekTotal
	Ratings, Sizes []Bar
	SizeMeasure    string // what a size counts in the store
	// Lake is the store's tables as Parquet, for analysts.
	Lake Lake
}

// WeekTotal is a store's live listings and total size at the end of a
// week (its last day).
type WeekTotal struct {
	Day, Week string
	Live      int64
	TotalSize int64
	// Step is the week's change of the total size when it stands out
	// from the others, and what made it; nil for an ordinary week.
	Step *Step
}

// Step is a week's change of a store's total size that stands out, in
// words ("+1,092,432"), and the listing that made most of it where one
// did: its name, its page and how ("new, at 1,090,000").
type Step struct {
	Change, Name, URL, How string
}

// Bar is one group of a distribution: its name, its count, the JSON path
// of the count in the page's twin (data-figure), and its length against
// the largest group (0 to 100).
type Bar struct {
	Name, Path string
	Listings   int
	Length     int
}

// Category is a category of a store with its live listings, linking to
// its chart.
type Category struct {
	Name     string
	Listings int
	URL      string
}

// RenderStore returns a store's page.
func RenderStore(d StorePage) ([]byte, error) {
	live, size := make([]Point, len(d.Weeks)), make([]Point, len(d.Weeks))
	for i, w := range d.Weeks {
		live[i], size[i] = Point{Day: w.Day, Size: w.Live, Has: true}, Point{Day: w.Day, Size: w.TotalSize, Has: true, Jump: w.Step != nil}
	}
	var liveChart, sizeChart template.HTML
	if len(d.Weeks) > 1 {
		liveChart = lineChart(live, weeklyLabel("Live listings", live), sizeAxis)
		sizeChart = lineChart(size, weeklyLabel("Total size", size), sizeAxis)
	}
	return execute(storePage, struct {
		StorePage
		LiveChart, SizeChart template.HTML
		Head                 Head
	}{d, liveChart, sizeChart, Head{
		Title:       d.Store + " · store statistics and charts",
		Description: "The " + d.Store + " store: its live listings, their total size, its charts (largest, trending, rising, new, top rated, climbers) and its categories.",
		Alternates:  []Alternate{{"application/json", d.JSONURL, "the statistics as JSON"}},
	}})
}

// weeklyLabel says a weekly series in words: what it is, its span, and
// its first and last value.
func weeklyLabel(what string, points []Point) string {
	first, last := points[0], points[len(points)-1]
	label := fmt.Sprintf("%s at each week's end, %s to %s: %s, then %s", what, first.Day, last.Day, Int(first.Size), Int(last.Size))
	var rings []string
	for _, p := range points {
		if p.Jump {
			rings = append(rings, p.Day)
		}
	}
	if len(rings) > 0 {
		label += "; ringed, a step that stands out in the week to " + strings.Join(rings, ", ")
	}
	return label
}

var storePage = parse("store", nil)
