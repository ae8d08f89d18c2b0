package v1

import (
	"math"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// ListingDoc is the API document of one listing: every stored field, with
// missing values as JSON null. Later views add growth, ranks and charts.
type ListingDoc struct {
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

	Growth       SizeGrowthDoc    `json:"growth"`
	RatingGrowth *RatingGrowthDoc `json:"ratingGrowth"` // null on apple, whose size is its rating count
	// GrowthComputedAt is the data's now when the history behind the
	// growth figures was read: the legacy API's lc. v1 leaves it out: it
	// is the same for most listings and says little of the data (a
	// window's since and the listing's readAt do).
	GrowthComputedAt *time.Time    `json:"-"`
	StoreRank        *int          `json:"storeRank"`
	CategoryRank     *int          `json:"categoryRank"`
	RankClimb7d      *int          `json:"rankClimb7d"`
	Charts           []ChartPosDoc `json:"charts"`
	AlsoIn           []AlsoInDoc   `json:"alsoIn"`
}

// AlsoInDoc is a listing of another store judged the same extension.
type AlsoInDoc struct {
	Store      string  `json:"store"`
	ID         string  `json:"id"`
	Confidence float64 `json:"confidence"`
}

// ChangeDoc is a growth figure over a window exactly as long as its name:
// the change from its start (from, the same instant as since) to its end
// (to, the newest reading), the change as a percent of the start (null
// when the start is 0), the readings the start's value comes from (one
// when a reading falls on it; else the two around it, the value on the
// line between them: interpolated).
type ChangeDoc struct {
	Change       int64       `json:"change"`
	Percent      *float64    `json:"percent"`
	Since        time.Time   `json:"since"`
	From         time.Time   `json:"from"`
	To           time.Time   `json:"to"`
	FromReadings []time.Time `json:"fromReadings"`
	Interpolated bool        `json:"interpolated"`
	// readings holds FromReadings (one or two), so that a document is one
	// allocation: an uncached page builds hundreds.
	readings [2]time.Time
}

// SizeGrowthDoc holds the size growth windows; each is null until a reading
// at least one window older than the newest exists.
type SizeGrowthDoc struct {
	D1   *ChangeDoc `json:"1d"`
	D7   *ChangeDoc `json:"7d"`
	D30  *ChangeDoc `json:"30d"`
	D365 *ChangeDoc `json:"365d"`
}

// RatingGrowthDoc holds the rating-count growth windows.
type RatingGrowthDoc struct {
	D1 *ChangeDoc `json:"1d"`
	D7 *ChangeDoc `json:"7d"`
}

// ChartPosDoc is a listing's position in a chart.
type ChartPosDoc struct {
	Chart    string  `json:"chart"`
	Category *string `json:"category"` // null for the whole store's chart
	Position int     `json:"position"`
}

func changeDoc(c views.Change, ok bool) *ChangeDoc {
	if !ok {
		return nil
	}
	since := time.Unix(c.Since, 0).UTC()
	d := &ChangeDoc{Change: c.Delta, Since: since, From: since, To: time.Unix(c.To, 0).UTC(), Interpolated: c.Interpolated()}
	d.readings[0] = time.Unix(c.Base.At, 0).UTC()
	d.FromReadings = d.readings[:1]
	if c.Interpolated() {
		d.readings[1] = time.Unix(c.Base.After, 0).UTC()
		d.FromReadings = d.readings[:2]
	}
	d.Percent = percent2(c.Percent)
	return d
}

// percent2 returns a percent rounded to two decimals; nil for NaN (a
// percent of zero).
func percent2(p float64) *float64 {
	if math.IsNaN(p) {
		return nil
	}
	p = math.Round(p*100) / 100
	return &p
}

// NewListingDoc returns the document of l, with its computed figures when
// f is not nil (ranks and charts are null and empty without them).
func NewListingDoc(l *views.Listing, f *figures.Figures) ListingDoc {
	d := ListingDoc{
		Store:       l.Store.String(),
		ID:          l.ID,
		Name:        l.Name,
		Developer:   l.Developer,
		Category:    l.Category,
		Kind:        l.Kind.String(),
		Description: l.Description,
		Icon:        l.Icon,
		Version:     l.Version,
		Updated:     dayPtr(l.Updated),
		Created:     dayPtr(l.Created),
		FirstSeen:   time.Unix(l.FirstSeen, 0).UTC(),
		DelistedAt:  unixPtr(l.Delisted),
		Live:        l.Live(),
		SizeMeasure: l.Store.SizeMeasure(),
		Featured:    l.Featured,
		Permissions: nonNil(l.Permissions),
		HostAccess:  nonNil(l.HostAccess),
		Topics:      nonNil(l.Topics),
		Size:        intPtr(l.Size()),
		Usage:       intPtr(l.Usage()),
		RatingCount: intPtr(l.RatingCount()),
		ReadAt:      unixPtr(l.ReadAt),
	}
	if l.Slug != "" {
		s := l.Slug
		d.Slug = &s
	}
	if l.Store.ReadsManifests() {
		mv, al := l.ManifestVersion, l.AccessLevel
		if mv != 0 {
			d.ManifestVersion = &mv
		}
		d.AccessLevel = &al
	}
	if l.Store == views.Firefox {
		d.WeeklyDownloads = intPtr(l.WeeklyDownloads())
	}
	if r, ok := l.Rating(); ok {
		r = views.RoundRating(r)
		d.Rating = &r
	}
	if l.HasStars {
		s := l.Stars
		d.Stars = &s
	}
	d.Growth = SizeGrowthDoc{changeDoc(l.SizeGrowth(views.Window1d)), changeDoc(l.SizeGrowth(views.Window7d)),
		changeDoc(l.SizeGrowth(views.Window30d)), changeDoc(l.SizeGrowth(views.Window365d))}
	if l.Store != views.Apple {
		d.RatingGrowth = &RatingGrowthDoc{changeDoc(l.RatingGrowth(views.Window1d)), changeDoc(l.RatingGrowth(views.Window7d))}
	}
	if t := l.Hist.ComputedAt(); !t.IsZero() {
		d.GrowthComputedAt = &t
	}
	d.Charts = []ChartPosDoc{}
	d.AlsoIn = []AlsoInDoc{}
	if f != nil {
		for _, k := range f.Links(l) {
			o := f.Replica().At(k.Index)
			d.AlsoIn = append(d.AlsoIn, AlsoInDoc{Store: o.Store.String(), ID: o.ID, Confidence: k.Confidence})
		}
		st, cat, climb, ok := f.Ranks(l)
		if st != views.NoRank {
			d.StoreRank, d.CategoryRank = &st, &cat
		}
		if ok {
			d.RankClimb7d = &climb
		}
		for _, p := range f.Positions(l) {
			pd := ChartPosDoc{Chart: p.Chart, Position: p.Position}
			if p.Category != "" {
				c := p.Category
				pd.Category = &c
			}
			d.Charts = append(d.Charts, pd)
		}
	}
	return d
}

func dayPtr(d views.Day) *string {
	if !d.Valid() {
		return nil
	}
	s := d.String()
	return &s
}

func unixPtr(sec int64) *time.Time {
	if sec == 0 {
		return nil
	}
	t := time.Unix(sec, 0).UTC()
	return &t
}

func intPtr(v int64, ok bool) *int64 {
	if !ok {
		return nil
	}
	return &v
}

// nonNil returns s, or an empty slice for nil, so that JSON reads [] and
// never null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
