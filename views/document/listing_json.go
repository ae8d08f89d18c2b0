package document

import (
	"time"

	"github.com/edge-stats/edge/internal/jsonw"
)

// AppendJSON appends d's JSON, the bytes encoding/json.Marshal gives
// (TestListingDocAppendsAsMarshal): an uncached page writes up to 200
// documents of some thirty times each.
func (d *Listing) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	b = jsonw.String(jsonw.Key(b, "store"), d.Store)
	b = jsonw.String(jsonw.Key(b, "id"), d.ID)
	b = jsonw.StringPtr(jsonw.Key(b, "slug"), d.Slug)
	b = jsonw.String(jsonw.Key(b, "name"), d.Name)
	b = jsonw.String(jsonw.Key(b, "developer"), d.Developer)
	b = jsonw.String(jsonw.Key(b, "category"), d.Category)
	b = jsonw.String(jsonw.Key(b, "kind"), d.Kind)
	b = jsonw.String(jsonw.Key(b, "description"), d.Description)
	b = jsonw.String(jsonw.Key(b, "icon"), d.Icon)
	b = jsonw.String(jsonw.Key(b, "version"), d.Version)
	b = jsonw.StringPtr(jsonw.Key(b, "updated"), d.Updated)
	b = jsonw.StringPtr(jsonw.Key(b, "created"), d.Created)
	b = jsonw.Time(jsonw.Key(b, "firstSeen"), d.FirstSeen)
	b = jsonw.TimePtr(jsonw.Key(b, "delistedAt"), d.DelistedAt)
	b = jsonw.Bool(jsonw.Key(b, "live"), d.Live)
	b = jsonw.Bool(jsonw.Key(b, "featured"), d.Featured)
	b = jsonw.UintPtr(jsonw.Key(b, "manifestVersion"), d.ManifestVersion)
	b = jsonw.Strings(jsonw.Key(b, "permissions"), d.Permissions)
	b = jsonw.Strings(jsonw.Key(b, "hostAccess"), d.HostAccess)
	b = jsonw.UintPtr(jsonw.Key(b, "accessLevel"), d.AccessLevel)
	b = jsonw.Strings(jsonw.Key(b, "topics"), d.Topics)
	b = jsonw.IntPtr(jsonw.Key(b, "size"), d.Size)
	b = jsonw.String(jsonw.Key(b, "sizeMeasure"), d.SizeMeasure)
	b = jsonw.IntPtr(jsonw.Key(b, "usage"), d.Usage)
	b = jsonw.IntPtr(jsonw.Key(b, "weeklyDownloads"), d.WeeklyDownloads)
	b = jsonw.FloatPtr(jsonw.Key(b, "rating"), d.Rating)
	b = jsonw.IntPtr(jsonw.Key(b, "ratingCount"), d.RatingCount)
	b = jsonw.Key(b, "stars")
	if d.Stars == nil {
		b = jsonw.Null(b)
	} else {
		b = jsonw.Slice(b, d.Stars[:], func(b []byte, n *uint32) []byte { return jsonw.Uint(b, uint64(*n)) })
	}
	b = jsonw.TimePtr(jsonw.Key(b, "readAt"), d.ReadAt)
	b = append(jsonw.Key(b, "growth"), '{')
	b = d.Growth.D1.appendJSON(jsonw.Key(b, "1d"))
	b = d.Growth.D7.appendJSON(jsonw.Key(b, "7d"))
	b = d.Growth.D30.appendJSON(jsonw.Key(b, "30d"))
	b = d.Growth.D365.appendJSON(jsonw.Key(b, "365d"))
	b = append(b, '}')
	b = jsonw.Key(b, "ratingGrowth")
	if d.RatingGrowth == nil {
		b = jsonw.Null(b)
	} else {
		b = append(b, '{')
		b = d.RatingGrowth.D1.appendJSON(jsonw.Key(b, "1d"))
		b = d.RatingGrowth.D7.appendJSON(jsonw.Key(b, "7d"))
		b = append(b, '}')
	}
	b = jsonw.IntPtr(jsonw.Key(b, "storeRank"), d.StoreRank)
	b = jsonw.IntPtr(jsonw.Key(b, "categoryRank"), d.CategoryRank)
	b = jsonw.IntPtr(jsonw.Key(b, "rankClimb7d"), d.RankClimb7d)
	b = jsonw.Slice(jsonw.Key(b, "charts"), d.Charts, func(b []byte, c *ChartPos) []byte {
		b = jsonw.String(jsonw.Key(append(b, '{'), "chart"), c.Chart)
		b = jsonw.StringPtr(jsonw.Key(b, "category"), c.Category)
		b = jsonw.Int(jsonw.Key(b, "position"), int64(c.Position))
		return append(b, '}')
	})
	b = jsonw.Slice(jsonw.Key(b, "alsoIn"), d.AlsoIn, func(b []byte, a *AlsoIn) []byte {
		b = jsonw.String(jsonw.Key(append(b, '{'), "store"), a.Store)
		b = jsonw.String(jsonw.Key(b, "id"), a.ID)
		b = jsonw.Float(jsonw.Key(b, "confidence"), a.Confidence)
		return append(b, '}')
	})
	return append(b, '}')
}

// appendJSON appends c's JSON, or null when c is nil.
func (c *Change) appendJSON(b []byte) []byte {
	if c == nil {
		return jsonw.Null(b)
	}
	b = append(b, '{')
	b = jsonw.Int(jsonw.Key(b, "change"), c.Change)
	b = jsonw.FloatPtr(jsonw.Key(b, "percent"), c.Percent)
	b = jsonw.Time(jsonw.Key(b, "since"), c.Since)
	b = jsonw.Time(jsonw.Key(b, "from"), c.From)
	b = jsonw.Time(jsonw.Key(b, "to"), c.To)
	b = jsonw.Slice(jsonw.Key(b, "fromReadings"), c.FromReadings, func(b []byte, t *time.Time) []byte { return jsonw.Time(b, *t) })
	b = jsonw.Bool(jsonw.Key(b, "interpolated"), c.Interpolated)
	return append(b, '}')
}
