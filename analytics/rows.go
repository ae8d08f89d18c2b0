package analytics

import (
	"time"

	"github.com/edge-stats/edge/views"
)

// ListingRow is one metadata version of a listing, as the crawler writes it
// to the listings table. Pointer fields are nullable columns.
type ListingRow struct {
	Store           views.Store
	ID              string
	CrawledAt       time.Time
	Slug            *string
	Name            string
	Developer       string
	Category        string
	Kind            views.Kind
	Description     string
	Icon            string
	Version         string
	StoreUpdated    *time.Time // a date: midnight UTC
	StoreCreated    *time.Time // a date: midnight UTC
	FirstSeen       time.Time
	DelistedAt      *time.Time
	Featured        bool
	ManifestVersion uint8
	Permissions     []string
	HostAccess      []string
	AccessLevel     uint8
	Topics          []string
}

// SnapshotRow is one crawl of a listing, as written to the snapshots table.
type SnapshotRow struct {
	Store           views.Store
	ID              string
	CrawledAt       time.Time
	Usage           *uint64 // users, active installs, daily users or installs; nil on apple
	WeeklyDownloads *uint64 // firefox only
	Rating          *float64
	RatingCount     *uint64
	Stars           []uint32 // counts of 1..5 star ratings; empty when unknown
}

// ReviewRow is one stored review, as written to the reviews table.
type ReviewRow struct {
	Store     views.Store
	ListingID string
	ReviewID  string
	PostedAt  time.Time
	Stars     uint8
	Author    string
	Lang      string
	Text      string
	CrawledAt time.Time
}
