package render

// WeekStore is one store's part of an edition's page.
type WeekStore struct {
	Store   string
	Figures []Figure // its totals
	Lists   []List
}

// WeekPage is what an edition's page shows.
type WeekPage struct {
	Week, Start, End string
	From, To         string // the two dates every change is between
	// ListSize is how many entries of each list the page shows, of the
	// FullSize the edition's JSON has.
	ListSize, FullSize int
	Stores             []WeekStore
	JSONURL            string
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
