package page

// WeekRef is an edition in the list of editions.
type WeekRef struct {
	Week, Start, End, URL string
}

// RenderWeeks returns the page of every weekly edition, newest first.
func RenderWeeks(weeks []WeekRef) ([]byte, error) {
	return execute(weeksPage, struct {
		Weeks []WeekRef
		Head  Head
	}{weeks, Head{Title: "Weekly editions", Description: "Every weekly edition: each store's week in listings, the biggest gainers, climbers, newcomers and departures.",
		Alternates: []Alternate{{"application/json", "/api/v1/weeks", "the editions as JSON"}, {"application/atom+xml", "/weeks.atom", "their Atom feed"}}}})
}

var weeksPage = parse("weeks", `<h1>Weekly editions</h1>
<p>Each store's week: its totals, the biggest gainers and climbers, newcomers and departures. <a href="/weeks.atom">Follow them in a feed reader (Atom)</a>.</p>
<ul>
{{range .Weeks}}<li><a href="{{.URL}}">{{.Week}}</a>, {{.Start}} to {{.End}}</li>
{{else}}<li>No week is complete yet.</li>
{{end}}</ul>`, nil)

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
}

// RenderWeek returns an edition's page.
func RenderWeek(d WeekPage) ([]byte, error) {
	return execute(weekPage, struct {
		WeekPage
		Head Head
	}{d, Head{Title: "Week " + d.Week + " · weekly edition", Description: "The week " + d.Start + " to " + d.End + " in the chrome, edge, firefox, apple and googleplay stores: totals, gainers, climbers, newcomers and departures.",
		Alternates: []Alternate{{"application/json", d.JSONURL, "the edition as JSON"}}}})
}

var weekPage = parse("week", `<h1>Week {{.Week}}</h1>
<p class="meta">{{.Start}} to {{.End}}. Every change is between the snapshots of {{.From}} and {{.To}}.</p>
<p>Each list shows its first {{.ListSize}} entries; <a href="{{.JSONURL}}">the edition as JSON</a> has up to {{.FullSize}} of each. <a href="/weeks">Every edition</a></p>
{{range .Stores}}<section aria-labelledby="{{.Store}}"><h2 id="{{.Store}}">{{.Store}}</h2>
<table>
{{range .Figures}}<tr><th scope="row">{{.Label}}</th><td data-figure="{{.Definition}}" data-value="{{.Raw}}">{{.Text}}</td></tr>
{{end}}</table>
{{range .Lists}}{{template "list" .}}
{{end}}</section>
{{end}}`, nil)
