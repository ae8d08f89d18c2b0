package render

// WeekRef is an edition in the list of editions, with its totals over
// every store: listings new that week, departed, and the change of the
// live listings.
type WeekRef struct {
	Week, Start, End, URL             string
	Newcomers, Departures, LiveChange int
}

// RenderWeeks returns the page of every weekly edition, newest first.
func RenderWeeks(weeks []WeekRef) ([]byte, error) {
	return execute(weeksPage, struct {
		Weeks []WeekRef
		Head  Head
	}{weeks, Head{Title: "Weekly editions", Description: "Every weekly edition: each store's week in listings, the biggest gainers, climbers, newcomers and departures.",
		Alternates: append([]Alternate{{"application/json", "/api/v1/weeks", "the editions as JSON"}, {"application/atom+xml", "/weeks.atom", "their Atom feed"}}, Files("/api/v1/weeks", "every week")...)}})
}

var weeksPage = parse("weeks", map[string]any{"signed": func(n int) string { return Signed(int64(n)) }})
