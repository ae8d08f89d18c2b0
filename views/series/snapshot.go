package series

import (
	"time"

	"github.com/edge-stats/edge/views"
)

// Snapshot is one UTC day of a listing's history: its latest crawl of the
// day, how many crawls the day held, and the day's store rank.
type Snapshot struct {
	Day             string    `json:"day"`    // yyyy-MM-dd (UTC)
	ReadAt          time.Time `json:"readAt"` // the day's latest reading, whose figures these are (RFC 3339, UTC)
	Crawls          int       `json:"crawls"`
	Size            *int64    `json:"size"` // usage, or ratings on apple
	Usage           *int64    `json:"usage"`
	WeeklyDownloads *int64    `json:"weeklyDownloads"`
	Rating          *float64  `json:"rating"`
	RatingCount     *int64    `json:"ratingCount"`
	StoreRank       *int64    `json:"storeRank"`    // null until the ranks job has ranked the day, or without a size
	CategoryRank    *int64    `json:"categoryRank"` // the same in the listing's category (as it is now)
	// DaysSincePrevious and Flags say what to know before trusting a
	// trend through the day (package series); set by the API.
	DaysSincePrevious int      `json:"daysSincePrevious"`
	Flags             []string `json:"flags"`
}

// Reading returns the snapshot as a reading.
func (s *Snapshot) Reading() Reading {
	d, _ := time.Parse(time.DateOnly, s.Day)
	return Reading{Day: views.DayOf(d), At: s.ReadAt, Crawls: s.Crawls, Usage: s.Usage,
		WeeklyDownloads: s.WeeklyDownloads, Rating: s.Rating, RatingCount: s.RatingCount}
}
