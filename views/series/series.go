// Package series is the pure logic of listings' daily series: a
// listing's reading at a day, its growth between two dates, several
// listings aligned on the same days, and the flags that tell an analyst
// what to know before trusting a trend (gaps, jumps, a store's rounding
// change, a relisting). It does no I/O: the readings come from package
// analytics, the answers are made by package v1.
package series

import (
	"math"
	"slices"
	"time"

	"github.com/edge-stats/edge/views"
)

// Reading is a listing's latest reading of one UTC day. Missing figures
// are nil.
type Reading struct {
	Day             views.Day
	At              time.Time // when the reading was taken
	Crawls          int       // readings of the listing that day (0 when the source keeps only the latest)
	Usage           *int64
	WeeklyDownloads *int64
	Rating          *float64
	RatingCount     *int64
}

// Size returns the reading's size in store s: its usage figure, or on
// apple its ratings count.
func (r *Reading) Size(s views.Store) *int64 {
	if s == views.Apple {
		return r.RatingCount
	}
	return r.Usage
}

// Lookback is how many days before a date a reading may be and still
// stand for that date (see At): a week, the longest a store's listing goes
// unread in normal crawling. Past it the date has no reading, rather than
// one that would pass a week-old figure off as the day's.
const Lookback = 7

// At returns the latest of rs (oldest first, one a day) on or before day,
// and not more than Lookback days before it; nil when there is none.
func At(rs []Reading, day views.Day) *Reading {
	i, _ := slices.BinarySearchFunc(rs, day+1, func(r Reading, d views.Day) int { return int(r.Day - d) })
	if i == 0 {
		return nil
	}
	if r := &rs[i-1]; r.Day >= day-Lookback {
		return r
	}
	return nil
}

// Change is the change of a figure between two readings.
type Change struct {
	Change  float64  // end minus start
	Percent *float64 // the change as a percent of the start, two decimals; nil when the start is 0
}

// Delta returns the change from a to b; nil when either is missing.
func Delta[T int64 | float64](a, b *T) *Change {
	if a == nil || b == nil {
		return nil
	}
	c := &Change{Change: float64(*b - *a)}
	if *a != 0 {
		p := math.Round(float64(*b-*a)/math.Abs(float64(*a))*10000) / 100
		c.Percent = &p
	}
	return c
}

// Align returns, for each day from first to last, the reading of rs (oldest
// first, one a day) taken that day, or nil: days without a reading are
// kept, as nil, so that series of several listings line up.
func Align(rs []Reading, first, last views.Day) []*Reading {
	if last < first {
		return nil
	}
	out := make([]*Reading, int(last-first)+1)
	for i := range rs {
		if d := rs[i].Day; d >= first && d <= last {
			out[d-first] = &rs[i]
		}
	}
	return out
}

// Ends returns the first and the last readings of rs that have a size in
// store s, with their indexes; ok is false when fewer than one has.
func Ends(rs []*Reading, s views.Store) (first, last int, ok bool) {
	first, last = -1, -1
	for i, r := range rs {
		if r == nil || r.Size(s) == nil {
			continue
		}
		if first < 0 {
			first = i
		}
		last = i
	}
	return first, last, first >= 0
}
