package views

import (
	"math"
	"slices"
	"time"
)

// Kind is what a listing is: 1 extension, 2 theme, 3 app, 0 unknown.
type Kind uint8

// The kinds of listing, numbered as upstream and in the legacy API.
const (
	KindUnknown   Kind = 0
	KindExtension Kind = 1
	KindTheme     Kind = 2
	KindApp       Kind = 3
)

// String returns the kind's API name.
func (k Kind) String() string {
	switch k {
	case KindExtension:
		return "extension"
	case KindTheme:
		return "theme"
	case KindApp:
		return "app"
	}
	return "unknown"
}

// Day is a calendar date counted in days since 1970-01-01 (UTC). Its zero
// value, NoDay, stands for a missing date: 1970-01-01 itself is never a
// store date, so it is given up for a zero value that means "none".
type Day int32

// NoDay is the Day of a missing date.
const NoDay Day = 0

// UpdatedAsRead returns a store's update date as the edge serves it: the
// store's own, but never later than the day of the crawl that read it
// (metaAt, unix seconds; 0 when unknown). A store's date is its claim; the
// change feed's version events are when the crawler saw a new version, and
// when the two disagree the change feed is the record of what was seen
// (docs/figures.md, Dates).
func UpdatedAsRead(d Day, metaAt int64) Day {
	if d.Valid() && metaAt > 0 {
		return min(d, DayOf(time.Unix(metaAt, 0)))
	}
	return d
}

// DayOf returns the UTC calendar day of t.
func DayOf(t time.Time) Day { return Day(floorDiv(t.Unix(), 86400)) }

// Time returns midnight UTC at the start of d.
func (d Day) Time() time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

// Valid reports whether d holds a date.
func (d Day) Valid() bool { return d != NoDay }

// String formats d as yyyy-MM-dd, or "" for NoDay.
func (d Day) String() string {
	if !d.Valid() {
		return ""
	}
	return d.Time().Format(time.DateOnly)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// ChangedAt returns when the listing last changed, in unix seconds: the
// later of its newest metadata crawl and its newest reading.
func (l *Listing) ChangedAt() int64 { return max(l.MetaAt, l.ReadAt) }

// Listing is the current state of one listing: its newest metadata version
// and its newest reading. Figures are held compactly with their presence
// (zero times and NoDay mark missing times and dates); read and write them
// with the accessor methods. In the zero Listing every figure is missing.
type Listing struct {
	// The fields every figure and sort reads come first, beside the
	// history: a pass over all listings (a sort's keys, the filter
	// columns) then touches their first three cache lines, not the
	// strings after them.
	FirstSeen int64 // unix seconds
	Delisted  int64 // unix seconds; 0 while live
	ReadAt    int64 // unix seconds of the newest reading; 0 when never read

	// Figures are stored plus one, so that zero means missing.
	usage1           int64
	weeklyDownloads1 int64
	ratingCount1     int64
	rating1          float32

	Updated Day // store's last-updated date
	Created Day // store's creation date, where the store publishes one

	Store           Store
	Kind            Kind
	AccessLevel     uint8 // 1-4; 0 when there is no manifest to judge
	ManifestVersion uint8 // 2 or 3; 0 when unknown

	Hist History // growth bases, climb base and sparkline

	Featured bool
	HasStars bool
	Stars    [5]uint32 // count of 1..5 star ratings; see HasStars

	MetaAt int64 // unix seconds of the newest metadata version's crawl; 0 when unknown

	ID          string
	Slug        string // "" when the store has none
	Name        string
	Developer   string
	Category    string
	Description string // at most DescriptionLimit characters are kept
	Icon        string
	Version     string
	Permissions []string // chrome and edge manifests only
	HostAccess  []string // host patterns the listing may reach
	Topics      []string // tag slugs
}

// ShareStrings replaces each string and string list of l that equals
// old's by old's own, so that a listing read again shares its memory with
// its previous version and the copy just read can be freed.
func (l *Listing) ShareStrings(old *Listing) {
	share := func(s *string, o string) {
		if *s == o {
			*s = o
		}
	}
	share(&l.ID, old.ID)
	share(&l.Slug, old.Slug)
	share(&l.Name, old.Name)
	share(&l.Developer, old.Developer)
	share(&l.Category, old.Category)
	share(&l.Description, old.Description)
	share(&l.Icon, old.Icon)
	share(&l.Version, old.Version)
	shareList := func(s *[]string, o []string) {
		if len(*s) > 0 && slices.Equal(*s, o) {
			*s = o
		}
	}
	shareList(&l.Permissions, old.Permissions)
	shareList(&l.HostAccess, old.HostAccess)
	shareList(&l.Topics, old.Topics)
}

// DescriptionLimit is how many characters of a description the replica keeps.
const DescriptionLimit = 200

// SetUsage sets the usage figure; ok false (or a negative v) marks it missing.
func (l *Listing) SetUsage(v int64, ok bool) { l.usage1 = plusOne(v, ok) }

// SetWeeklyDownloads sets the weekly downloads; ok false marks them missing.
func (l *Listing) SetWeeklyDownloads(v int64, ok bool) { l.weeklyDownloads1 = plusOne(v, ok) }

// SetRatingCount sets the number of ratings; ok false marks it missing.
func (l *Listing) SetRatingCount(v int64, ok bool) { l.ratingCount1 = plusOne(v, ok) }

// SetRating sets the average rating; ok false marks the listing unrated.
func (l *Listing) SetRating(v float64, ok bool) {
	if !ok || math.IsNaN(v) || v < 0 {
		l.rating1 = 0
		return
	}
	l.rating1 = float32(v) + 1
}

func plusOne(v int64, ok bool) int64 {
	if !ok || v < 0 {
		return 0
	}
	return v + 1
}

func minusOne(v int64) (int64, bool) { return v - 1, v > 0 }

// Usage returns the usage figure (users, active installs, daily users or
// installs, by store) and whether there is one.
func (l *Listing) Usage() (int64, bool) { return minusOne(l.usage1) }

// WeeklyDownloads returns the weekly downloads (firefox) and whether known.
func (l *Listing) WeeklyDownloads() (int64, bool) { return minusOne(l.weeklyDownloads1) }

// RatingCount returns the number of ratings and whether known.
func (l *Listing) RatingCount() (int64, bool) { return minusOne(l.ratingCount1) }

// Rating returns the average rating, at float32 precision as stored, and
// whether the listing is rated.
func (l *Listing) Rating() (float64, bool) {
	if l.rating1 <= 0 {
		return 0, false
	}
	return float64(l.rating1 - 1), true
}

// Size returns the listing's size: its usage figure, or on apple its rating
// count; ok is false when the figure is missing.
func (l *Listing) Size() (int64, bool) {
	if l.Store == Apple {
		return l.RatingCount()
	}
	return l.Usage()
}

// Live reports whether the listing has been read and is still in its store.
func (l *Listing) Live() bool { return l.Delisted == 0 && l.ReadAt != 0 }

// Crawled reports whether the listing has been read at least once.
func (l *Listing) Crawled() bool { return l.ReadAt != 0 }

// HostReachesAll reports whether a host pattern grants every website.
func HostReachesAll(h string) bool {
	switch h {
	case "<all_urls>", "*://*/*", "http://*/*", "https://*/*", "*://*", "http://*/", "https://*/":
		return true
	}
	return false
}

// RoundRating rounds an average rating to the two decimals stores publish,
// undoing float32 storage noise (4.37 rather than 4.369999885559082).
func RoundRating(r float64) float64 { return math.Round(r*100) / 100 }

// RankLookback is how many UTC days, up to and including a day, a store
// rank of that day looks back for a listing's newest size: a listing read
// in none of them is not ranked that day, and counts for no other
// listing's rank. Small listings are read every third day, so a day's
// ranking of that day's readings alone would count a third of them.
const RankLookback = 7

// NoRank marks a listing without a rank.
const NoRank = 0
