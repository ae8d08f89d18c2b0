package render

import (
	"html/template"
)

// Option is a choice of a filter's select.
type Option struct {
	Value, Label string
	Selected     bool
}

// Entry is one listing in a list of a page: its place, its name and
// developer, the address of its page, and the list's figures of it, in
// the list's column order.
type Entry struct {
	Position        int
	Name, Developer string
	URL             string
	Figures         []Figure
	// CompareURL adds the listing to the comparison the reader is
	// building ("" when none is, or it is in it).
	CompareURL string
}

// Column is a column of a list: its label and the definition its figures
// follow (an anchor of /definitions); in a list sorted by a click, the
// address that sorts by it and, on the column sorted by, the order
// ("ascending" or "descending", as aria-sort says it).
type Column struct {
	Label, Definition string
	SortURL, Sorted   string
}

// List is a ranked list of listings (a chart, or its top on another
// page): a caption, the address of the whole list, its columns and
// entries, and what to say when it has none.
type List struct {
	Caption string
	URL     string // the whole list's page ("" on the list's own page)
	Columns []Column
	Entries []Entry
	Empty   string
	// Name is the first column's sort, in a list sorted by a click, and
	// its label ("" for "Listing": a list of categories or permissions
	// names its own).
	Name Column
	// Window says what a chart of a window compares, under its caption
	// where the chart is shown away from its page ("" for none).
	Window string
}

// Link is a link of a page's navigation.
type Link struct {
	Label, URL string
	Current    bool
}

// BarTable is a distribution as a table of bars (templates/list.html,
// "bars"): its anchor, heading, the heading of its groups' column, and
// its bars.
type BarTable struct {
	ID, Title, Column string
	Bars              []Bar
}

// EventTable is a table of events (templates/list.html, "events"): its
// label, its events, and what to say when it has none.
type EventTable struct {
	Label, Empty string
	Events       []Event
}

// listFuncs are the functions of the lists of listings and events
// (templates/list.html).
var listFuncs = template.FuncMap{"add": func(a, b int) int { return a + b },
	"barTable": func(id, title, column string, bars []Bar) BarTable {
		return BarTable{ID: id, Title: title, Column: column, Bars: bars}
	},
	"int":      func(n int) string { return Int(int64(n)) },
	"barWidth": func(length int) int { return max(length, 1) },
	"eventTable": func(label, empty string, es []Event) EventTable {
		return EventTable{Label: label, Empty: empty, Events: es}
	}}
