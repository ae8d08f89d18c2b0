package document

import (
	"math"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// Listing is the API document of one listing: every stored field, with
// missing values as JSON null. Later views add growth, ranks and charts.
type Listing struct {
	Store           string     `json:"store"`
	ID              string     `json:"id"`
	Slug            *string    `json:"slug"`
	Name            string     `json:"name"`
	Developer       string     `json:"developer"`
	Category        string     `json:"category"`
	Kind            string     `json:"kind"`
	Description     string     `json:"description"`
	Icon            string     `json:"icon"`
	Version         string     `json:"version"`
	Updated         *string    `json:"updated"`
	Created         *string    `json:"created"`
	FirstSeen       time.Time  `json:"firstSeen"`
	DelistedAt      *time.Time `json:"delistedAt"`
	Live            bool       `json:"live"`
	Featured        bool       `json:"featured"`
	ManifestVersion *uint8     `json:"manifestVersion"`
	Permissions     []string   `json:"permissions"`
	HostAccess      []string   `json:"hostAccess"`
	AccessLevel     *uint8     `json:"accessLevel"`
	Topics          []string   `json:"topics"`
	Size            *int64     `json:"size"`
	SizeMeasure     string     `json:"sizeMeasure"` // what size counts in the listing's store
	Usage           *int64     `json:"usage"`
	WeeklyDownloads *int64     `json:"weeklyDownloads"`
	Rating          *float64   `json:"rating"`
	RatingCount     *int64     `json:"ratingCount"`
	Stars           *[5]uint32 `json:"stars"`
	ReadAt          *time.Time `json:"readAt"`

	Growth       SizeGrowth    `json:"growth"`
	RatingGrowth *RatingGrowth `json:"ratingGrowth"` // null on apple, whose size is its rating count
	// GrowthComputedAt is the data's now when the history behind the
	// growth figures was read: the legacy API's lc. v1 leaves it out: it
	// is the same for most listings and says little of the data (a
	// window's since and the listing's readAt do).
	GrowthComputedAt *time.Time `json:"-"`
	StoreRank        *int       `json:"storeRank"`
	CategoryRank     *int       `json:"categoryRank"`
	RankClimb7d      *int       `json:"rankClimb7d"`
	Charts           []ChartPos `json:"charts"`
	AlsoIn           []AlsoIn   `json:"alsoIn"`

	// held holds what the pointers above point to, so that a document is
	// one allocation, and a page of them one: an uncached page builds up
	// to 200.
	held docValues
}

// docValues are the values a Listing's pointers point to.
type docValues struct {
	slug, updated, created                  string
	delistedAt, readAt, computedAt          time.Time
	manifestVersion, accessLevel            uint8
	size, usage, weeklyDownloads, ratingCnt int64
	rating                                  float64
	stars                                   [5]uint32
	storeRank, categoryRank, rankClimb      int
	ratingGrowth                            RatingGrowth
	sizeWindows                             [4]Change
	ratingWindows                           [2]Change
}

// AlsoIn is a listing of another store judged the same extension.
type AlsoIn struct {
	Store      string  `json:"store"`
	ID         string  `json:"id"`
	Confidence float64 `json:"confidence"`
}

// Change is a growth figure over a window exactly as long as its name:
// the change from its start (from, the same instant as since) to its end
// (to, the newest reading), the change as a percent of the start (null
// when the start is 0), the readings the start's value comes from (one
// when a reading falls on it; else the two around it, the value on the
// line between them: interpolated).
type Change struct {
	Change       int64       `json:"change"`
	Percent      *float64    `json:"percent"`
	Since        time.Time   `json:"since"`
	From         time.Time   `json:"from"`
	To           time.Time   `json:"to"`
	FromReadings []time.Time `json:"fromReadings"`
	Interpolated bool        `json:"interpolated"`
	// readings and percent hold what FromReadings and Percent point to.
	readings [2]time.Time
	percent  float64
}

// SizeGrowth holds the size growth windows; each is null until a reading
// at least one window older than the newest exists.
type SizeGrowth struct {
	D1   *Change `json:"1d"`
	D7   *Change `json:"7d"`
	D30  *Change `json:"30d"`
	D365 *Change `json:"365d"`
}

// RatingGrowth holds the rating-count growth windows.
type RatingGrowth struct {
	D1 *Change `json:"1d"`
	D7 *Change `json:"7d"`
}

// ChartPos is a listing's position in a chart.
type ChartPos struct {
	Chart    string  `json:"chart"`
	Category *string `json:"category"` // null for the whole store's chart
	Position int     `json:"position"`
}

// setChange fills *d with c and returns d, or nil when !ok.
func setChange(d *Change, c views.Change, ok bool) *Change {
	if !ok {
		return nil
	}
	since := time.Unix(c.Since, 0).UTC()
	*d = Change{Change: c.Delta, Since: since, From: since, To: time.Unix(c.To, 0).UTC(), Interpolated: c.Interpolated()}
	d.readings[0] = time.Unix(c.Base.At, 0).UTC()
	d.FromReadings = d.readings[:1]
	if c.Interpolated() {
		d.readings[1] = time.Unix(c.Base.After, 0).UTC()
		d.FromReadings = d.readings[:2]
	}
	if !math.IsNaN(c.Percent) {
		d.percent = round2(c.Percent)
		d.Percent = &d.percent
	}
	return d
}

// Percent2 returns a percent rounded to two decimals; nil for NaN (a
// percent of zero).
func Percent2(p float64) *float64 {
	if math.IsNaN(p) {
		return nil
	}
	p = round2(p)
	return &p
}

// round2 rounds a percent to two decimals.
func round2(p float64) float64 { return math.Round(p*100) / 100 }

// NewListing returns the document of l, with its computed figures when
// f is not nil (ranks and charts are null and empty without them).
func NewListing(l *views.Listing, f *figures.Figures) Listing {
	d := new(Listing)
	d.Fill(l, f)
	return *d
}

// Fill sets d to the document of l (NewListing) without allocating
// but for l's dates and chart positions, so that one document can be
// filled for each listing of a page in turn. d's pointers point into d
// itself: a copy of d shares them, and d must not be filled again while
// a copy is in use.
func (d *Listing) Fill(l *views.Listing, f *figures.Figures) {
	*d = Listing{
		Store:       l.Store.String(),
		ID:          l.ID,
		Name:        l.Name,
		Developer:   l.Developer,
		Category:    l.Category,
		Kind:        l.Kind.String(),
		Description: l.Description,
		Icon:        l.Icon,
		Version:     l.Version,
		FirstSeen:   time.Unix(l.FirstSeen, 0).UTC(),
		Live:        l.Live(),
		SizeMeasure: l.Store.SizeMeasure(),
		Featured:    l.Featured,
		Permissions: nonNil(l.Permissions),
		HostAccess:  nonNil(l.HostAccess),
		Topics:      nonNil(l.Topics),
	}
	d.fillReading(l)
	d.fillGrowth(l)
	d.Charts = []ChartPos{}
	d.AlsoIn = []AlsoIn{}
	if f != nil {
		d.fillFigures(l, f)
	}
}

// fillReading sets the figures of l's newest reading: its dates, size,
// usage, ratings, manifest, weekly downloads and stars.
func (d *Listing) fillReading(l *views.Listing) {
	h := &d.held
	d.Updated = dayIn(&h.updated, l.Updated)
	d.Created = dayIn(&h.created, l.Created)
	d.DelistedAt = unixIn(&h.delistedAt, l.Delisted)
	d.ReadAt = unixIn(&h.readAt, l.ReadAt)
	if v, ok := l.Size(); ok {
		h.size, d.Size = v, &h.size
	}
	if v, ok := l.Usage(); ok {
		h.usage, d.Usage = v, &h.usage
	}
	if v, ok := l.RatingCount(); ok {
		h.ratingCnt, d.RatingCount = v, &h.ratingCnt
	}
	if l.Slug != "" {
		h.slug = l.Slug
		d.Slug = &h.slug
	}
	if l.Store.ReadsManifests() {
		h.manifestVersion, h.accessLevel = l.ManifestVersion, l.AccessLevel
		if h.manifestVersion != 0 {
			d.ManifestVersion = &h.manifestVersion
		}
		d.AccessLevel = &h.accessLevel
	}
	if l.Store == views.Firefox {
		if v, ok := l.WeeklyDownloads(); ok {
			h.weeklyDownloads, d.WeeklyDownloads = v, &h.weeklyDownloads
		}
	}
	if r, ok := l.Rating(); ok {
		h.rating = views.RoundRating(r)
		d.Rating = &h.rating
	}
	if l.HasStars {
		h.stars = l.Stars
		d.Stars = &h.stars
	}
}

// fillGrowth sets l's size and rating-count growth windows, and when the
// history behind them was read.
func (d *Listing) fillGrowth(l *views.Listing) {
	h := &d.held
	for i, w := range [...]views.Window{views.Window1d, views.Window7d, views.Window30d, views.Window365d} {
		c, ok := l.SizeGrowth(w)
		p := setChange(&h.sizeWindows[i], c, ok)
		switch i {
		case 0:
			d.Growth.D1 = p
		case 1:
			d.Growth.D7 = p
		case 2:
			d.Growth.D30 = p
		case 3:
			d.Growth.D365 = p
		}
	}
	if l.Store != views.Apple {
		c1, ok1 := l.RatingGrowth(views.Window1d)
		c7, ok7 := l.RatingGrowth(views.Window7d)
		h.ratingGrowth = RatingGrowth{setChange(&h.ratingWindows[0], c1, ok1), setChange(&h.ratingWindows[1], c7, ok7)}
		d.RatingGrowth = &h.ratingGrowth
	}
	if t := l.Hist.ComputedAt(); !t.IsZero() {
		h.computedAt = t
		d.GrowthComputedAt = &h.computedAt
	}
}

// fillFigures sets what the published figures f say of l: its listings
// in other stores, its ranks and climb, its charts.
func (d *Listing) fillFigures(l *views.Listing, f *figures.Figures) {
	h := &d.held
	for _, k := range f.Links(l) {
		o := f.Replica().At(k.Index)
		d.AlsoIn = append(d.AlsoIn, AlsoIn{Store: o.Store.String(), ID: o.ID, Confidence: k.Confidence})
	}
	st, cat, climb, ok := f.Ranks(l)
	if st != views.NoRank {
		h.storeRank, h.categoryRank = st, cat
		d.StoreRank, d.CategoryRank = &h.storeRank, &h.categoryRank
	}
	if ok {
		h.rankClimb = climb
		d.RankClimb7d = &h.rankClimb
	}
	for _, p := range f.Positions(l) {
		pd := ChartPos{Chart: p.Chart, Position: p.Position}
		if p.Category != "" {
			c := p.Category
			pd.Category = &c
		}
		d.Charts = append(d.Charts, pd)
	}
}

// dayIn sets *dst to d as a date and returns dst, or nil for no day.
func dayIn(dst *string, d views.Day) *string {
	if !d.Valid() {
		return nil
	}
	*dst = d.String()
	return dst
}

// unixIn sets *dst to the time of sec and returns dst, or nil for 0.
func unixIn(dst *time.Time, sec int64) *time.Time {
	if sec == 0 {
		return nil
	}
	*dst = time.Unix(sec, 0).UTC()
	return dst
}

// UnixPtr returns the time of sec (Unix seconds, UTC), or nil for 0.
func UnixPtr(sec int64) *time.Time {
	if sec == 0 {
		return nil
	}
	t := time.Unix(sec, 0).UTC()
	return &t
}

// nonNil returns s, or an empty slice for nil, so that JSON reads [] and
// never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// Amount returns a pointer to c's change, or nil when c is nil (a window
// without a figure).
func (c *Change) Amount() *int64 {
	if c == nil {
		return nil
	}
	return &c.Change
}
