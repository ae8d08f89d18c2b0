package figures

import (
	"cmp"
	"slices"
	"time"

	"github.com/edge-stats/edge/views"
)

// CategoryCount is a category name with its number of live listings.
type CategoryCount struct {
	Name     string `json:"name"`
	Listings int    `json:"listings"`
	// TotalSize is the sum of its live listings' sizes, and Growth7d and
	// Growth30d the sums of their size growth over 7 and 30 days (of the
	// listings with the window; nil when none has it): a store's
	// categories only (AllCategories, across stores, leaves them zero).
	TotalSize int64  `json:"totalSize"`
	Growth7d  *int64 `json:"growth7d"`
	Growth30d *int64 `json:"growth30d"`
}

// Topic is a tag slug with its live listings per store, largest first.
type Topic struct {
	Slug    string
	byStore [views.NumStores][]int32
}

// Count returns the topic's live listings in store s.
func (t *Topic) Count(s views.Store) int { return len(t.byStore[s]) }

// Bucket is a labelled count.
type Bucket struct {
	Label string `json:"label"`
	N     int    `json:"n"`
}

// Share is a named part of a store's live listings: v1's statistics name
// every count {name, listings}, as categories do. (The legacy summary
// keeps its own {label, n}: Bucket.)
type Share struct {
	Name     string `json:"name"`
	Listings int    `json:"listings"`
}

// VersionShare is the live listings of one manifest version.
type VersionShare struct {
	ManifestVersion int `json:"manifestVersion"`
	Listings        int `json:"listings"`
}

// LevelShare is the live listings of one access level.
type LevelShare struct {
	AccessLevel int `json:"accessLevel"`
	Listings    int `json:"listings"`
}

// CategoryStat is one of a store's biggest categories.
type CategoryStat struct {
	Name      string `json:"name"`
	Listings  int    `json:"listings"`
	TotalSize int64  `json:"totalSize"`
	Unrated   int    `json:"unrated"`
	// g7 and g30 sum its listings' size growth over 7 and 30 days, of the
	// n7 and n30 listings with the window.
	g7, g30 int64
	n7, n30 int
}

// StoreStats are the figures of /api/v1/stores/{store}/stats. Counts are of
// listings; "this week" means the 7 days up to the data's newest reading.
type StoreStats struct {
	Store              string         `json:"store"`
	Known              int            `json:"known"`              // every listing ever found
	Live               int            `json:"live"`               // read and still in the store
	Delisted           int            `json:"delisted"`           // gone from the store
	Pending            int            `json:"pending"`            // found, never read
	NewThisWeek        int            `json:"newThisWeek"`        // live, first seen in the last 7 days
	DelistedThisWeek   int            `json:"delistedThisWeek"`   // left the store in the last 7 days
	Featured           int            `json:"featured"`           // live and featured by the store
	TotalSize          int64          `json:"totalSize"`          // sum of live listings' sizes
	TotalSize7dAgo     int64          `json:"totalSize7dAgo"`     // the same at the 7-day climb's reference time (asOf minus 7 days at the last full load): listings live then, by their newest size then
	TotalSizeChange7d  int64          `json:"totalSizeChange7d"`  // totalSize minus totalSize7dAgo
	SizeMeasure        string         `json:"sizeMeasure"`        // what a size is in this store (see Store.SizeMeasure)
	Rated              int            `json:"rated"`              // live with a rating
	AverageRating      *float64       `json:"averageRating"`      // mean rating of rated live listings, 2 decimals
	RatingDistribution []Share        `json:"ratingDistribution"` // live listings by average rating, then "unrated"
	SizeBuckets        []Share        `json:"sizeBuckets"`        // live listings by size, then "none"
	Kinds              []Share        `json:"kinds"`              // live listings by kind
	TopCategories      []CategoryStat `json:"topCategories"`      // the 10 categories with most live listings
	ManifestVersions   []VersionShare `json:"manifestVersions"`   // chrome and edge: live listings by manifest version
	AccessLevels       []LevelShare   `json:"accessLevels"`       // chrome and edge: live listings by access level 1-4
	AsOf               time.Time      `json:"asOf"`               // the data's newest reading
}

// PlatformCount is the census of one store in the summary.
type PlatformCount struct {
	Platform int `json:"platform"`
	Known    int `json:"known"`
	Crawled  int `json:"crawled"`
	Live     int `json:"live"`
	Delisted int `json:"delisted"`
}

// SummaryCategory is one of the biggest categories across stores.
type SummaryCategory struct {
	Label   string `json:"label"`
	N       int    `json:"n"`
	Unrated int    `json:"unrated"`
}

// Summary is the legacy /api/summary document, field for field.
type Summary struct {
	Known        int               `json:"known"`
	Crawled      int               `json:"crawled"`
	Delisted     int               `json:"delisted"`
	Live         int               `json:"live"`
	Rated        int               `json:"rated"`
	NoVersionKey int               `json:"noVersionKey"`
	Snapshots    int64             `json:"snapshots"`
	Pending      int               `json:"pending"`
	Platforms    []PlatformCount   `json:"platforms"`
	Buckets      []Bucket          `json:"buckets"`
	Cats         []SummaryCategory `json:"cats"`
	Years        []YearCount       `json:"years"`
}

// YearCount is the number of live listings last updated in a year.
type YearCount struct {
	Label int `json:"label"`
	N     int `json:"n"`
}

// PermissionCount is a permission with the number of live chrome and edge
// listings requesting it.
type PermissionCount struct {
	Permission string `json:"permission"`
	Count      int    `json:"count"`
}

// SizeBucketLabels are the six size ranges of the summary and store
// statistics, followed by the bucket of listings without a figure.
var SizeBucketLabels = []string{"<100", "100-1K", "1K-10K", "10K-100K", "100K-1M", "1M+", "none"}

func sizeBucket(size int64, ok bool) int {
	switch {
	case !ok:
		return 6
	case size < 100:
		return 0
	case size < 1_000:
		return 1
	case size < 10_000:
		return 2
	case size < 100_000:
		return 3
	case size < 1_000_000:
		return 4
	}
	return 5
}

// RatingBucketLabels are the ranges of average rating in store statistics
// (lower bound inclusive), followed by the unrated bucket.
var RatingBucketLabels = []string{"1-2", "2-3", "3-3.5", "3.5-4", "4-4.5", "4.5-5", "unrated"}

func ratingBucket(r float64, ok bool) int {
	r = views.RoundRating(r)
	switch {
	case !ok:
		return 6
	case r < 2:
		return 0
	case r < 3:
		return 1
	case r < 3.5:
		return 2
	case r < 4:
		return 3
	case r < 4.5:
		return 4
	}
	return 5
}

func shares(names []string, counts []int) []Share {
	out := make([]Share, len(names))
	for i, n := range names {
		out[i] = Share{n, counts[i]}
	}
	return out
}

func buckets(labels []string, counts []int) []Bucket {
	out := make([]Bucket, len(labels))
	for i, l := range labels {
		out[i] = Bucket{l, counts[i]}
	}
	return out
}

// aggregate computes categories, topics, store statistics, the summary and
// permissions in one pass over the replica.
func (f *Figures) aggregate(snapshots int64) {
	t := newTally(f.replica, snapshots)
	for _, s := range views.Stores {
		f.stats[s], f.categories[s] = t.store(s)
	}
	t.sum.Buckets = buckets(SizeBucketLabels, t.usageB)
	f.allCategories = t.categories()
	lastYear := t.ref.Year()
	for y := lastYear; y > lastYear-9; y-- {
		t.sum.Years = append(t.sum.Years, YearCount{y, t.years[y]})
	}
	f.summary = t.sum
	f.permissions = make([]PermissionCount, 0, len(t.perms))
	for p, n := range t.perms {
		f.permissions = append(f.permissions, PermissionCount{p, n})
	}
	slices.SortFunc(f.permissions, func(a, b PermissionCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Permission, b.Permission))
	})
	f.topics = sortedTopics(f.replica.All(), t.topics)
}

// Categories returns the category names of store s with their live
// listings, sorted by name.
func (f *Figures) Categories(s views.Store) []CategoryCount { return nonNil(f.categories[s]) }

// AllCategories returns every category name across stores with its live
// listings, sorted by name.
func (f *Figures) AllCategories() []CategoryCount { return f.allCategories }

// Topics returns every topic, sorted by slug.
func (f *Figures) Topics() []Topic { return f.topics }

// topicListings returns the live listings of topic slug by store, as
// replica indexes, largest first (the topic filter of listing queries).
func (f *Figures) topicListings(slug string) (*[views.NumStores][]int32, bool) {
	i, found := slices.BinarySearchFunc(f.topics, slug, func(t Topic, slug string) int { return cmp.Compare(t.Slug, slug) })
	if !found {
		return nil, false
	}
	return &f.topics[i].byStore, true
}

// TopicListings returns the live listings of topic slug in store s, largest
// first; ok is false when no live listing anywhere has the topic.
func (f *Figures) TopicListings(slug string, s views.Store) (ls []*views.Listing, ok bool) {
	i, found := slices.BinarySearchFunc(f.topics, slug, func(t Topic, slug string) int { return cmp.Compare(t.Slug, slug) })
	if !found {
		return nil, false
	}
	for _, j := range f.topics[i].byStore[s] {
		ls = append(ls, &f.replica.All()[j])
	}
	return ls, true
}

// Stats returns the statistics of store s.
func (f *Figures) Stats(s views.Store) *StoreStats { return f.stats[s] }

// Summary returns the census of every store.
func (f *Figures) Summary() *Summary { return f.summary }

// Permissions returns every permission requested by live chrome and edge
// listings, most common first (ties by name).
func (f *Figures) Permissions() []PermissionCount { return nonNil(f.permissions) }

// nonNil returns s, or an empty slice for nil, so that JSON says [].
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
