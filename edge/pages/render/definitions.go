package render

// Definition is what one figure means, as /definitions shows it: the
// same text as GET /api/v1/definitions.
type Definition struct {
	Name, Measures, Window, Cadence, Null string
}

// readerNames are the figures' names for readers, where the API's name
// (its field) is not one: the glossary heads each entry with it and
// gives the API's name beside.
var readerNames = map[string]string{
	"size": "Size", "usage": "Users or installs (usage)", "weeklyDownloads": "Weekly downloads", "rating": "Rating",
	"ratingCount": "Ratings", "stars": "Ratings by star", "readAt": "Read at", "growth": "Growth", "ratingGrowth": "Ratings growth",
	"storeRank": "Rank in the store", "permissionChange": "Permission count, change over 30 days", "categoryRank": "Rank in the category", "rankClimb7d": "Rank climb, 7 days", "charts": "Chart positions",
	"crawls": "Readings a day", "daysSincePrevious": "Days since the reading before", "flags.gap": "Gap", "flags.jump": "Jump",
	"flags.rounding": "Rounded by the store", "flags.relisted": "Back in the store", "growthBetweenDates": "Growth between two dates",
	"compareGrowth": "Growth in a comparison", "alsoIn": "Also in another store", "changedAt": "Changed at", "changeAt": "When a change was seen",
	"changeKind": "Kind of change", "change.version": "New version", "change.permissions": "Permissions changed",
	"change.hostAccess": "Sites it may reach changed", "change.manifestVersion": "Manifest version changed",
	"change.accessLevel": "Access level changed", "change.developer": "New developer", "change.name": "Renamed",
	"change.category": "New category", "change.featured": "Featured or not", "change.delisted": "Left the store",
	"change.relisted": "Back in the store", "change.takeover": "Takeover: a new owner, then more access", "live": "Live listings",
	"known": "Known listings", "delisted": "Delisted listings", "pending": "Found, not read yet", "rated": "Rated listings",
	"newThisWeek": "New this week", "delistedThisWeek": "Delisted this week", "totalSize": "Total size",
	"totalSizeChange7d": "Total size change, 7 days", "averageRating": "Average rating", "widened": "Asks for more sites",
}

// ReaderName is the figure name's name for readers, or name itself.
func ReaderName(name string) string {
	if r, ok := readerNames[name]; ok {
		return r
	}
	return name
}

// RenderDefinitions returns the page of every figure's definition, each
// with an anchor of its name (/definitions#size), which the pages' figure
// labels link to.
func RenderDefinitions(defs []Definition, jsonURL string) ([]byte, error) {
	return execute(definitionsPage, struct {
		Head Head
		Defs []Definition
	}{
		Head: Head{Title: "What the figures mean · edge",
			Description: "The definition of every figure the service publishes about store listings: what it measures, over which window, how often it changes and when it is null.",
			Alternates:  []Alternate{{"application/json", jsonURL, "the definitions as JSON"}}},
		Defs: defs,
	})
}

var definitionsPage = parse("definitions", map[string]any{"readerName": ReaderName})
