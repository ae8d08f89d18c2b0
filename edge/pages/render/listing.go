package render

import (
	"html/template"
)

// ListingPage is what a listing's page shows.
type ListingPage struct {
	// Badges are the listing's badges to show elsewhere, each with the
	// snippets to copy.
	Badges []BadgeSnippet
	// Embed is the HTML that shows its size chart on another site, and
	// EmbedURL the chart's address here.
	Embed, EmbedURL string
	// DeveloperURL is its developer's page.
	DeveloperURL string
	// Versions are the versions read in the change window, newest first.
	Versions []VersionRow
	// Ratings are its daily average rating in hundredths (Size), the
	// days of Points; nil where it has none.
	Ratings []Point
	// Summary is the store's description of the listing ("" for none),
	// StarTable its ratings by star (nil where the store gives none).
	Summary     string
	StarTable   *StarTable
	Store, ID   string
	Name        string
	Developer   string
	Category    string
	SizeMeasure string // what size counts in the store (users, installs, ratings)
	// Lake is its store's tables as Parquet, with the query of its history.
	Lake     Lake
	Live     bool
	Delisted string // the day it was delisted, "" while live
	Figures  []Figure
	Points   []Point // oldest first
	Ranks    []Point // the daily rank in the store (Size holds it), the days of Points
	// CategoryRanks are the daily ranks in its category, the same way.
	CategoryRanks []Point
	// Cadence says how often the listing is read, for the chart's note
	// ("every 3 days"); "" when it cannot be told.
	Cadence string
	// Links: the listing's JSON document, its history as JSON and CSV,
	// its changes as an Atom feed.
	DocumentURL, HistoryURL, HistoryCSVURL, ChangesFeedURL string
	ChangesURL, ReviewsURL                                 string // the pages of its changes and its reviews ("": its store's are not kept)
	// Jumps are the days the size chart rings: each step larger than the
	// listing's own history makes plausible, from the reading before.
	Jumps []Jump
	// Takeover is the listing's newest takeover in the change window, nil
	// when it has none.
	Takeover *Takeover
	About    About
	// CompareURL starts a comparison with the listing: the listings'
	// browser, each listing offering to join it.
	CompareURL string
}

// About is what a listing's page says of it beside its figures: its
// version, the store's update date, when it was first seen, its category
// and topics (linked), and on the stores whose manifests are read its
// permissions and host access, with what changed in them last.
type About struct {
	Version, Updated, FirstSeen string
	CategoryURL                 string
	Topics                      []Link
	Manifest                    bool // the store's manifests are read
	// NoPermissions says why the page lists no permissions where the
	// store's manifests are not read for it ("" where they are).
	NoPermissions           string
	Permissions, HostAccess []string
	// AccessChanged says when the permissions or host access last
	// changed in the change window, and how; "" when they did not.
	AccessChanged string
	// StoreURL is the listing's own page in its store.
	StoreURL string
	// Charts are the charts it is in, with its place ("Trending #3").
	Charts []Link
}

// Jump is a step of a listing's size its page points out: the day, and
// the size before and on it, in words.
type Jump struct {
	Day, Before, After string
}

// Takeover is a takeover as a listing's page warns of it: the day it
// changed hands, from whom to whom, the day it asked for more, and what.
type Takeover struct {
	Sold, Widened, From, To, What string
}

// VersionRow is one version of a listing: the day it was first read, the
// version and the one before, and what else changed in the same crawl.
type VersionRow struct {
	Day, Version, Before, Also string
}

// BadgeSnippet is one badge of a listing: its figure, its address (on
// this site, for the page's preview) and the Markdown that shows it
// elsewhere (at the service's public address).
type BadgeSnippet struct {
	Figure, URL, Markdown string
}

// RenderListing returns the page of d.
func RenderListing(d ListingPage) ([]byte, error) {
	return execute(listingPage, listingView{
		ListingPage:  d,
		Chart:        chart(d.Points, d.SizeMeasure),
		RankChart:    rankChart(d.Ranks, "Rank in the store, daily"),
		CatRankChart: rankChart(d.CategoryRanks, "Rank in its category, "+d.Category+", daily"),
		RatingChart:  ratingChart(d.Ratings),
		Gaps:         Gaps(d.Points),
		Head: Head{
			Title:       d.Name + " · " + d.Store + " · figures and history",
			Description: description(d),
			Alternates: []Alternate{{"application/json", d.DocumentURL, "the listing as JSON"},
				{"application/json", d.HistoryURL, "its daily history as JSON"}, {"text/csv", d.HistoryCSVURL, "as CSV"},
				{"application/atom+xml", d.ChangesFeedURL, "its changes as a feed (Atom)"}},
		},
	})
}

// description says in a sentence what a listing's page shows.
func description(d ListingPage) string {
	s := "Size (" + d.SizeMeasure + "), growth, rating and ranks of " + d.Name
	if d.Developer != "" {
		s += " by " + d.Developer
	}
	return s + " in the " + d.Store + " store, with its daily history."
}

type listingView struct {
	ListingPage
	Head      Head
	Chart     template.HTML
	RankChart template.HTML
	// CatRankChart is the category ranks' chart.
	CatRankChart template.HTML
	// RatingChart is the ratings' chart.
	RatingChart template.HTML
	Gaps        []Gap
}

var listingPage = parse("listing", template.FuncMap{"last": func(p []Point) int { return len(p) - 1 }, "joinDays": func() int { return JoinDays }, "permissions": Permissions})
