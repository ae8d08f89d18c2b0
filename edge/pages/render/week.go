package render

// WeekStore is one store's part of an edition's page.
type WeekStore struct {
	Store   string
	Figures []Figure // its totals
	Lists   []List   // the lists with entries
	// Empty are the captions of its lists with no entry this week, said
	// in one line instead of a table each.
	Empty []string
}

// WeekPage is what an edition's page shows.
type WeekPage struct {
	Week, Start, End string
	From, To         string // the two dates every change is between
	// FullSize is how many entries each list of the edition holds at most
	// (the page shows them all, as the JSON has them).
	FullSize int
	Stores   []WeekStore
	JSONURL  string
	// Prev and Next are the editions before and after this one; a nil
	// one has none.
	Prev, Next *Link
}

// RenderWeek returns an edition's page.
func RenderWeek(d WeekPage) ([]byte, error) {
	return execute(weekPage, struct {
		WeekPage
		Head Head
	}{d, Head{Title: "Week " + d.Week + " · weekly edition", Description: "The week " + d.Start + " to " + d.End + " in the chrome, edge, firefox, apple and googleplay stores: totals, gainers, climbers, newcomers and departures.",
		Alternates: []Alternate{{"application/json", d.JSONURL, "the edition as JSON"}}}})
}

var weekPage = parse("week", nil)
