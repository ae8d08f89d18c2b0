package lake

import (
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
)

// The schemas of the other tables, with the rule of ListingsSchema.
const (
	ReadingsSchema = "readings@1"
	ChangesSchema  = "changes@1"
	ReviewsSchema  = "reviews@1"
)

// ReadingsPerGroup and ReadingsPageBytes are the readings' layout: a
// file holds every day of a store's history (a listing's days are
// consecutive rows), and a reader of one listing over HTTP reads the
// footer, whose size grows with the row groups, the page indexes of the
// group that holds the listing, whose size grows with its pages, and a
// page of each column it asks for; a reader without the page index
// (DuckDB) reads the footer and the group's columns whole. Groups of 2M
// rows in pages of 64 KiB hold both near their least at bench_5m's size
// (bench/README, The lake), and compress better than small pages.
const (
	ReadingsPerGroup  = 2_000_000
	ReadingsPageBytes = 64 << 10
)

// Reading is one row of the readings table: a listing's latest reading of
// a UTC day, and its ranks that day (null when the day was not ranked or
// the listing not ranked in it).
type Reading struct {
	Store           string    `parquet:"store,dict"`
	ID              string    `parquet:"id,dict"`        // a listing's days are a run: a dictionary index each, in runs
	Day             int32     `parquet:"day,date,delta"` // days since 1970-01-01
	ReadAt          time.Time `parquet:"read_at,timestamp(millisecond),delta"`
	Size            *int64    `parquet:"size,optional"`
	Usage           *int64    `parquet:"usage,optional"`
	WeeklyDownloads *int64    `parquet:"weekly_downloads,optional"`
	Rating          *float64  `parquet:"rating,optional"`
	RatingCount     *int64    `parquet:"rating_count,optional"`
	Rank            *int32    `parquet:"rank,optional"`
	CategoryRank    *int32    `parquet:"category_rank,optional"`
}

// ReadingOf returns the row of store s's reading r.
func ReadingOf(s views.Store, r *analytics.DayReading) Reading {
	out := Reading{Store: s.String(), ID: r.ID, Day: int32(r.Day), ReadAt: r.At, Usage: i64(r.Usage),
		WeeklyDownloads: i64(r.WeeklyDownloads), Rating: r.Rating, RatingCount: i64(r.RatingCount),
		Rank: rank(r.Rank), CategoryRank: rank(r.CategoryRank)}
	out.Size = out.Usage
	if s == views.Apple {
		out.Size = out.RatingCount
	}
	if out.Size == nil {
		// The day's ranks rank a listing by its newest size of the days
		// before; a day without a size of its own has none, as the API's
		// history gives it (storeRank and categoryRank null).
		out.Rank, out.CategoryRank = nil, nil
	}
	return out
}

func rank(r uint32) *int32 {
	if r == 0 {
		return nil
	}
	x := int32(r)
	return &x
}

// Change is one row of the changes table: a change of a listing as the
// event feed gives it (its eventId the feed's), with the listing field it
// changed, and whether it belongs to a takeover.
type Change struct {
	Store   string    `parquet:"store,dict"`
	ID      string    `parquet:"id"`
	At      time.Time `parquet:"changed_at,timestamp(millisecond)"` // "at" is a keyword of DuckDB's SQL
	Kind    string    `parquet:"kind,dict"`
	Field   string    `parquet:"field,dict"`
	Before  *string   `parquet:"before,optional"`
	After   *string   `parquet:"after,optional"`
	Added   []string  `parquet:"added,list"`
	Removed []string  `parquet:"removed,list"`
	Widened *bool     `parquet:"widened,optional"`
	// Takeover is true on a takeover's row and on the two changes it
	// joins (the change of developer and the widening).
	Takeover bool     `parquet:"takeover"`
	EventID  string   `parquet:"event_id"`
	Joins    []string `parquet:"joins,list"` // a takeover's two eventIds
}

// fields names the listing document's field each kind of change changes.
var fields = map[changes.Kind]string{
	changes.Version: "version", changes.Permissions: "permissions", changes.HostAccess: "hostAccess",
	changes.ManifestVersion: "manifestVersion", changes.AccessLevel: "accessLevel", changes.Developer: "developer",
	changes.Name: "name", changes.Category: "category", changes.Featured: "featured",
	changes.Delisted: "delistedAt", changes.Relisted: "delistedAt", changes.Takeover: "developer",
}

// ChangesOf appends to dst the rows of one listing's changes cs (in feed
// order, takeovers among them, as analytics.StreamListingChanges gives
// them).
func ChangesOf(dst []Change, cs []changes.Change) []Change {
	first := len(dst)
	for i := range cs {
		c := &cs[i]
		row := Change{Store: c.Store.String(), ID: c.ID, At: time.Unix(c.At, 0).UTC(), Kind: c.Kind.String(),
			Field: fields[c.Kind], EventID: document.EventCursor(changes.PosOf(c))}
		switch c.Kind {
		case changes.Takeover:
			row.Before, row.After, row.Added, row.Takeover = str(c.Before), str(c.After), c.Added(), true
			row.Joins = joins(dst[first:], cs[:i], c)
		case changes.Permissions, changes.HostAccess:
			row.Added, row.Removed = c.Added(), c.Removed()
			if c.Kind == changes.HostAccess {
				w := c.Widened
				row.Widened = &w
			}
		default:
			row.Before, row.After = str(c.Before), str(c.After)
		}
		dst = append(dst, row)
	}
	return dst
}

// joins marks the two changes takeover t joins (among before, the
// listing's changes ahead of it, whose rows are rows) and returns their
// eventIds: the listing's last change of developer at or before t, and
// the change of t's crawl of t's widening kind.
func joins(rows []Change, before []changes.Change, t *changes.Change) []string {
	var out []string
	for i := len(before) - 1; i >= 0; i-- {
		if c := &before[i]; c.Kind == changes.Developer && c.At <= t.At {
			rows[i].Takeover = true
			out = append(out, rows[i].EventID)
			break
		}
	}
	for i := len(before) - 1; i >= 0 && before[i].At == t.At; i-- {
		if before[i].Kind == t.Via {
			rows[i].Takeover = true
			out = append(out, rows[i].EventID)
			break
		}
	}
	return out
}

func str(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Review is one row of the reviews table: a review's metadata, without
// its text or its author (docs/api-v1.md, The lake).
type Review struct {
	Store     string    `parquet:"store,dict"`
	ID        string    `parquet:"id"` // the listing's
	ReviewID  string    `parquet:"review_id"`
	PostedAt  time.Time `parquet:"posted_at,timestamp(millisecond)"`
	Stars     int32     `parquet:"stars"`
	Lang      string    `parquet:"lang,dict"`
	TextChars int64     `parquet:"text_chars"`
	CrawledAt time.Time `parquet:"crawled_at,timestamp(millisecond)"`
}

// ReviewOf returns the row of store s's review r.
func ReviewOf(s views.Store, r *analytics.ReviewMeta) Review {
	return Review{Store: s.String(), ID: r.ListingID, ReviewID: r.ReviewID, PostedAt: r.PostedAt, Stars: int32(r.Stars),
		Lang: r.Lang, TextChars: int64(r.TextChars), CrawledAt: r.CrawledAt}
}
