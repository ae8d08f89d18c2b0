package views

import (
	"math"
	"time"
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
	Usage           *int64     `json:"usage"`
	WeeklyDownloads *int64     `json:"weeklyDownloads"`
	Rating          *float64   `json:"rating"`
	RatingCount     *int64     `json:"ratingCount"`
	Stars           *[5]uint32 `json:"stars"`
	ReadAt          *time.Time `json:"readAt"`
}

// NewListingDoc returns the document of l.
func NewListingDoc(l *Listing) ListingDoc {
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
	if l.Store == Firefox {
		d.WeeklyDownloads = intPtr(l.WeeklyDownloads())
	}
	if r, ok := l.Rating(); ok {
		r = RoundRating(r)
		d.Rating = &r
	}
	if l.HasStars {
		s := l.Stars
		d.Stars = &s
	}
	return d
}

// RoundRating rounds an average rating to the two decimals stores publish,
// undoing float32 storage noise (4.37 rather than 4.369999885559082).
func RoundRating(r float64) float64 { return math.Round(r*100) / 100 }

func dayPtr(d Day) *string {
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

func nonNil(ss []string) []string {
	if ss == nil {
		return []string{}
	}
	return ss
}
