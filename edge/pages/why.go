package pages

import (
	"strconv"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/document"
)

// nullReasons says why a figure of a listing's document is null, by the
// figures' rules (docs/figures.md), for a reader of its page.
type nullReasons struct {
	d    document.Listing
	last views.Day // the data's newest day
}

// read is why a figure of the newest reading is null: the listing was
// never read, or else otherwise.
func (n nullReasons) read(otherwise string) string {
	if n.d.ReadAt == nil {
		return "never read"
	}
	return otherwise
}

func (n nullReasons) size() string {
	if n.d.ReadAt == nil {
		return "never read"
	}
	if n.d.Store == views.Apple.String() {
		return "no ratings yet: on apple the size is the ratings count"
	}
	return "the store gave no figure in its newest reading"
}

func (n nullReasons) notLive() string {
	if n.d.DelistedAt != nil {
		return "delisted on " + n.d.DelistedAt.UTC().Format(time.DateOnly)
	}
	return "never read"
}

func (n nullReasons) rank() string {
	switch {
	case !n.d.Live:
		return n.notLive()
	case n.d.Size == nil:
		return "no size to rank by"
	case n.d.ReadAt != nil && views.DayOf(*n.d.ReadAt) < n.last-6:
		return "not read in the 7 days up to " + n.last.String() + " (last read " + n.d.ReadAt.UTC().Format(time.DateOnly) + "): a rank counts the listings read then"
	}
	return "not ranked yet"
}

func (n nullReasons) climb() string {
	if n.d.StoreRank == nil {
		return n.rank()
	}
	then := n.last - 7
	if views.DayOf(n.d.FirstSeen) > then {
		return "first seen on " + n.d.FirstSeen.UTC().Format(time.DateOnly) + ": no rank 7 days before"
	}
	return "not ranked 7 days before (not read in the 7 days up to " + then.String() + ")"
}

func (n nullReasons) growth(w views.Window, cadence string) string {
	switch {
	case !n.d.Live:
		return n.notLive()
	case n.d.ReadAt == nil || n.d.Size == nil:
		return "no size in its newest reading"
	}
	start := n.d.ReadAt.Add(-time.Duration(w.Days()) * 24 * time.Hour)
	if n.d.FirstSeen.After(start) {
		days := strconv.Itoa(w.Days()) + " days"
		if w.Days() == 1 {
			days = "a day"
		}
		return "first seen on " + n.d.FirstSeen.UTC().Format(time.DateOnly) + ", less than " + days + " before its newest reading"
	}
	s := "no reading on " + start.UTC().Format(time.DateOnly) + ", nor two around it at most " + strconv.FormatInt(w.MaxGap()/3600, 10) + " hours apart"
	if w.Days() > 1 {
		s = "no reading on " + start.UTC().Format(time.DateOnly) + ", nor two around it at most " + strconv.FormatInt(w.MaxGap()/86400, 10) + " days apart"
	}
	if cadence != "" {
		s += " (read " + cadence + ")"
	}
	return s
}
