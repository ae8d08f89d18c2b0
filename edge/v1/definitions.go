package v1

import (
	"fmt"
	"strings"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/views/links"
	"github.com/edge-stats/edge/views/series"
)

// Definition is what one figure means: what it measures, over which
// window, how often it changes, and when it is null. The OpenAPI
// description names it from each field that carries the figure
// (x-definition), and docs/definitions.md is made from the same text.
type Definition struct {
	Name     string `json:"name"`
	Measures string `json:"measures"`
	Window   string `json:"window"`
	Cadence  string `json:"cadence"`
	Null     string `json:"null"`
}

const (
	viewsCadence   = "Rebuilt in the background from the stored crawls every few minutes; changes when a new reading arrives."
	changeCadence  = "Read from the stored metadata versions when the edge loads and at every refresh (every few minutes), as the crawler writes them; answered from memory."
	historyCadence = "Read from the stored crawls when asked for, and cached until the next rebuild; a past day changes only if a late crawl of it arrives."
)

// Definitions are every figure's definition, in the order the docs list
// them.
var Definitions = []Definition{
	{"size", "A listing's size: its usage figure (users on chrome, installs on edge and googleplay, daily users on firefox), or on apple its ratings count. sizeMeasure names the unit; sizes of different stores are never compared.",
		"The listing's newest reading.", viewsCadence, "Never read, or no figure in the reading (an apple app without ratings)."},
	{"usage", "The usage figure as the store publishes it: users (chrome), installs (edge, googleplay), daily users (firefox).",
		"The listing's newest reading.", viewsCadence, "The store publishes none (apple), or the reading lacks it."},
	{"weeklyDownloads", "firefox: the downloads of the last week as the store publishes them.", "The store's week, as of the newest reading.", viewsCadence, "Every store but firefox."},
	{"rating", "The average rating, 0 to 5, two decimals.", "All ratings ever given, as of the newest reading.", viewsCadence, "Unrated."},
	{"ratingCount", "The number of ratings.", "All ratings ever given, as of the newest reading.", viewsCadence, "The store publishes none."},
	{"stars", "Ratings by stars, 1 star first.", "All ratings ever given, as of the newest reading.", viewsCadence, "The store does not publish them."},
	{"readAt", "When the reading whose figures are shown was taken (a listing's newest, a history day's latest).", "An instant (RFC 3339, UTC).", viewsCadence, "Never read."},
	{"growth", "Size growth over 1, 7, 30 and 365 days: the size at the listing's newest reading (to) minus its size exactly one window before (from, also since): the reading on that instant, or the straight line between the readings around it (fromReadings; interpolated), rounded to the nearest whole; percent is the change as a percent of the size at from, two decimals.",
		"Exactly 1, 7, 30 or 365 days, to the second; the readings around the start may lie at most 48 hours, 10, 33 and 372 days apart.", viewsCadence,
		"No reading on the start, nor two around it close enough, or the listing is not live; percent is null when the size at from is 0."},
	{"ratingGrowth", "Ratings-count growth over 1 and 7 days, by the rule of growth.", "Exactly 1 or 7 days, by growth's rule.", viewsCadence, "As growth; always null on apple, whose size is its ratings count."},
	{"storeRank", "1 plus the number of the store's live listings with a larger size (ties share a rank: 1, 2, 2, 4). In a history, a day's rank counts the listings not delisted by the day's end by their newest size in the 7 days up to the day.",
		"The newest readings (a history: the day).", viewsCadence + " A history's days are ranked by a daily background job.", "No size, or a day not ranked yet."},
	{"categoryRank", "The store rank within the listing's category: 1 plus the number of the category's live listings with a larger size. In a history, a day's rank in the category the listing is in now, by the store rank's rule for a day.",
		"The newest readings (a history: the day).", viewsCadence + " A history's days are ranked by a daily background job.", "No size, or a day not ranked yet (or ranked by a release before category ranks)."},
	{"rankClimb7d", "Store rank 7 days ago minus store rank now: positive is a climb. \"7 days ago\" is the data's newest reading minus 7 days.", "7 days.", viewsCadence, "Unranked then or now."},
	{"charts", "Positions in the store's charts (top, trending, rising, new, top-rated, climbers), 100 places each, live listings only; rising and climbers count only listings of size 1,000 or more (100 ratings on apple), top-rated only those with 50 ratings or more.",
		"trending and rising: every entry's size growth between the same two instants (a chart's from and to), the 7 days ending three days before the data's newest reading, each end's size by growth's rule (rising ranks by the percent as published, two decimals, then size; neither is the listing's own growth.7d); climbers: the rank climb from the data's newest reading minus 7 days to it; new: first seen in the last 30 days.", viewsCadence, "Never null: an empty list when the listing is in no chart."},
	{"crawls", "How many times the listing was read that UTC day; the day's figures are those of its latest reading.", "A UTC day.", historyCadence, "Never null."},
	{"daysSincePrevious", "Days since the previous day of the history that had a reading; 1 on consecutive days.", "Between two days of a history.", historyCadence, "0 on the first day of the history."},
	{"flags.gap", "The listing was not read for longer than usual before this day: more days passed since its previous reading (daysSincePrevious) than its usual spacing in the answered window (the median, at least 1 day). A trend through the gap is interpolated by whoever draws it. A listing the crawler reads every third day is not flagged every third day.", "Between two days of a history.", historyCadence, "An empty flags list when there is nothing to know."},
	{"flags.jump", fmt.Sprintf("The size moved from the previous reading by more than the listing's own history makes plausible: at least %d, and in log terms a day (|ln((b+1)/(a+1))| / days) more than %d times the median of the same over the answered window's days and more than a 25%% move in a day. Often a store's recount, a delisting elsewhere, or a bulk install; read the trend on either side of it.", series.JumpMinChange, series.JumpFactor),
		"Between two days with a size.", historyCadence, "An empty flags list when there is nothing to know."},
	{"flags.rounding", fmt.Sprintf("The store changed how it rounds the size: from this day on (this day and the next) sizes are multiples of a power of ten of at least %d and a hundred times the largest that divides the two sizes before (or the other way round). Part of the day's change is the rounding, not the listing. Sizes under %d are not judged.", series.RoundingUnit, series.RoundingMin),
		"Between four days with a size.", historyCadence, "An empty flags list when there is nothing to know."},
	{"flags.relisted", "The listing came back to its store that day (or on a day without a reading before it) after having been delisted: days before it may read as a departure.", "A metadata version live after a delisted one.", historyCadence, "An empty flags list when there is nothing to know."},
	{"growthBetweenDates", fmt.Sprintf("A listing's figures at two dates, or two instants, and their change. A date's end is the latest reading on or before the date, and at most %d days before it. An instant's end is each figure by growth's rule: the reading on the instant, or the straight line between the readings around it when they lie at most maxGap apart (the span plus a day for spans up to a day, 3 days up to 30 days, a week beyond). change is the end's figure minus the start's, percent the change as a percent of the start (two decimals).", series.Lookback),
		"Any two dates, or two instants, at most 730 days apart, up to the data's newest day or reading.", historyCadence, "An end without a reading in its 7 days (a date), or without readings close enough around it (an instant), has null figures, and so has the change; percent is null when the start is 0."},
	{"compareGrowth", "In a comparison, each listing's size at the last day of the window with a size minus its size at the first such day.", "The days of the comparison's window that have a reading with a size.", historyCadence, "Fewer than two days with a size in the window."},
	{"alsoIn", fmt.Sprintf("Listings of chrome, edge and firefox judged to be the same extension. Candidates have the same name once normalised (case, punctuation and words naming a browser or saying extension left out); a pair scores %.1f, plus %.1f when the developers are the same once normalised (company suffixes left out), plus %.1f times the Jaccard similarity of the descriptions' words. A pair is linked when it scores %.2f or more (so never without the same developer) and each is the other's best candidate in its store by %.2f or more; the score is the confidence. Measured on the seeded data: precision 0.994 and recall 0.966 (20,000 listings), 1.000 and 0.984 (100,000, the stores' real shares).",
		links.NameWeight, links.DeveloperWeight, links.DescriptionWeight, links.LinkThreshold, links.LinkMargin),
		"The listings' newest metadata.", viewsCadence, "Never null: an empty list when no listing of another store is judged the same; listings never read are not linked."},
	{"changedAt", "When a listing last changed for the change feed: the later of its newest metadata crawl and its newest reading.", "An instant (RFC 3339, UTC).", viewsCadence, "Never null: a listing is in the feed once it has been crawled."},
	{"changeAt", "When a change of a listing's metadata was seen: the crawl that read the version holding it. The change happened between that crawl and the one that read the version before.", "An instant (RFC 3339, UTC), within the change window (the newest metadata crawl less EDGE_CHANGE_DAYS, 180 by default).", changeCadence, "Never null."},
	{"changeKind", "What changed between two consecutive metadata versions of a listing: one of the change.* kinds below. One crawl can hold several changes of one listing (a new version that adds a permission), one event each. A listing's first version is no change, nor is a version the crawler only knew of (never read).", "Two consecutive metadata versions.", changeCadence, "Never null."},
	{"change.version", "The listing's version string changed (before, after).", "Two consecutive versions.", changeCadence, "before and after are null only when the store gave no version."},
	{"change.permissions", "chrome and edge: the manifest's permissions changed; added and removed name them, sorted (an MV2 manifest lists host access such as <all_urls> among its permissions).", "Two consecutive versions.", changeCadence, "Other stores: no such change (their manifests are not read)."},
	{"change.hostAccess", "chrome and edge: the host patterns the listing may reach changed; added and removed name them, sorted. widened is true when it added a pattern while no pattern it had reached every host (<all_urls>, *://*/*, http://*/* or https://*/*, as the hostAccess filter of the listings reads them): it may now reach hosts it could not.", "Two consecutive versions.", changeCadence, "Other stores: no such change."},
	{"change.manifestVersion", "chrome and edge: the manifest version changed (2 to 3).", "Two consecutive versions.", changeCadence, "No change when either version is unknown."},
	{"change.accessLevel", "chrome and edge: the access level the crawler derives from permissions and host access (1 to 4) changed.", "Two consecutive versions.", changeCadence, "No change when either level is unknown."},
	{"change.developer", "The developer (publisher) named by the store changed: an ownership change, the classic way a trusted extension is sold and turned.", "Two consecutive versions.", changeCadence, "Never null."},
	{"change.name", "The listing's name changed.", "Two consecutive versions.", changeCadence, "Never null."},
	{"change.category", "The listing moved to another category of its store.", "Two consecutive versions.", changeCadence, "before or after is empty when the store gave none."},
	{"change.featured", "The store featured the listing (after true) or stopped (after false): chrome's Featured badge, edge's and firefox's recommendations.", "Two consecutive versions.", changeCadence, "Never null."},
	{"change.delisted", "The listing left its store: after is the delisting's time (RFC 3339).", "Two consecutive versions.", changeCadence, "before is null."},
	{"change.relisted", "The listing came back to its store after a delisting: before is the delisting's time.", "Two consecutive versions.", changeCadence, "after is null."},
	{"change.takeover", "Derived from two changes of one listing, the pattern of the extension takeovers that made the news: a new developer (change.developer), then, in the same crawl or within 90 days after and before the listing's next new developer, a widening of what it may do: a permission added (change.permissions), host access widened (change.hostAccess with widened true) or a higher access level (change.accessLevel). One per change of hands, at the crawl of its first widening: before and after are the old and new developer, added the permissions then the host patterns that crawl added, joins the eventIds of the change of developer and of the widening. Both changes must lie in the change window.", "A change of developer and up to 90 days after it.", changeCadence, "Never null; absent, not null, when there is no widening in the 90 days or the developer changed again first."},
	{"live", "A store's live listings: read at least once and not delisted.", "The newest readings and metadata.", viewsCadence, "Never null."},
	{"permissionChange", "How many more live chrome and edge listings asked for a permission on the data's newest day than 30 days before, each day as the ranks job counts it: every listing by its newest metadata read by the day's end, not delisted by then.",
		"The 30 days to the data's newest day (changeFrom to changeTo).", "Each day is counted by a daily background job.", "Either day not counted yet."},
	{"known", "Every listing of the store ever found: live, delisted, and found but never read yet.", "Since the first crawl.", viewsCadence, "Never null."},
	{"delisted", "The store's listings that left it and have not come back.", "The newest metadata.", viewsCadence, "Never null."},
	{"pending", "The store's listings found (named by the store's lists or the crawler's discovery) but not read yet: known = live + delisted + pending.", "Since the first crawl.", viewsCadence, "Never null."},
	{"rated", "The store's live listings with an average rating: those averageRating averages.", "Each live listing's newest reading.", viewsCadence, "Never null."},
	{"newThisWeek", "The store's live listings first seen in the 7 days up to the data's newest reading.", "The 7 days up to the data's newest reading.", viewsCadence, "Never null."},
	{"delistedThisWeek", "The store's listings that left it in the 7 days up to the data's newest reading.", "The 7 days up to the data's newest reading.", viewsCadence, "Never null."},
	{"totalSize", "The sum of the sizes of the store's live listings (see size: users, installs or ratings, by store).", "Each live listing's newest reading.", viewsCadence, "Never null: 0 when no live listing has a size."},
	{"totalSizeChange7d", "The store's total size now minus its total size 7 days before the data's newest reading (the listings live then, by their newest size then): positive is growth.", "7 days.", viewsCadence, "Never null."},
	{"averageRating", "The mean of the average ratings of the store's rated live listings, two decimals: each listing weighs the same, whatever its number of ratings.", "Each rated live listing's newest reading.", viewsCadence, "No live listing of the store is rated."},
	{"widened", "A hostAccess change that lets the listing reach hosts it could not before (see change.hostAccess).", "Two consecutive versions.", changeCadence, "Null for every kind but hostAccess."},
}

// definitionsAnswer is the answer of GET /api/v1/definitions.
func definitionsAnswer() (*answer.Answer, error) {
	return answer.JSON(struct {
		Definitions []Definition `json:"definitions"`
	}{Definitions})
}

// getDefinitions answers GET /api/v1/definitions.
func (s *API) getDefinitions(c *fiber.Ctx) (answer.Reply, error) {
	return answer.Reply{Answer: s.definitions, CacheControl: answer.Private}, nil
}

// DefinitionsMarkdown returns the definitions as the Markdown of
// docs/definitions.md.
func DefinitionsMarkdown() string {
	var b strings.Builder
	b.WriteString("# Definitions of the figures\n\n")
	b.WriteString("Made from the same text as `GET /api/v1/definitions` (edge/v1/definitions.go);\n")
	b.WriteString("`go test ./edge/v1 -run TestDefinitionsDoc` checks that it is current, and\n")
	b.WriteString("`EDGE_UPDATE_DOCS=1` with the same command rewrites it. The OpenAPI\n")
	b.WriteString("description names each field's definition in `x-definition`.\n")
	for _, d := range Definitions {
		fmt.Fprintf(&b, "\n## `%s`\n\n%s\n\n- **Window:** %s\n- **Cadence:** %s\n- **Null when:** %s\n", d.Name, d.Measures, d.Window, d.Cadence, d.Null)
	}
	return b.String()
}
