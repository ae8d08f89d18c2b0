// Package editions is the weekly editions: ISO weeks, the state of every
// listing at a week's end, and the edition built from two such states (a
// week's newcomers, departures, gainers, climbers and totals per store),
// kept newest first in an immutable Set.
package editions

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/edge-stats/edge/views"
)

// Week is an ISO 8601 week: Monday to Sunday, UTC.
type Week struct {
	Year int // ISO week-numbering year
	Num  int // 1 to 52 or 53
}

var weekPattern = regexp.MustCompile(`^([0-9]{4})-W([0-9]{2})$`)

// ParseWeek reads a week id of the form <yyyy>-W<ww>. A week that the year
// does not have (W00, W54, or W53 in a 52-week year) is an error.
func ParseWeek(s string) (Week, error) {
	m := weekPattern.FindStringSubmatch(s)
	if m == nil {
		return Week{}, fmt.Errorf("week %q is not of the form <yyyy>-W<ww>, such as 2026-W05", s)
	}
	y, _ := strconv.Atoi(m[1])
	n, _ := strconv.Atoi(m[2])
	if n < 1 || n > WeeksIn(y) {
		return Week{}, fmt.Errorf("week %q does not exist: ISO year %d has weeks 01 to %02d", s, y, WeeksIn(y))
	}
	return Week{y, n}, nil
}

// WeeksIn returns the number of ISO weeks of year y (52 or 53).
func WeeksIn(y int) int {
	_, w := time.Date(y, 12, 28, 0, 0, 0, 0, time.UTC).ISOWeek() // Dec 28 is always in the last week
	return w
}

// WeekOf returns the ISO week of day d.
func WeekOf(d views.Day) Week {
	y, w := d.Time().ISOWeek()
	return Week{y, w}
}

// String returns the week id, such as "2026-W05".
func (w Week) String() string { return fmt.Sprintf("%04d-W%02d", w.Year, w.Num) }

// Start returns the week's Monday.
func (w Week) Start() views.Day {
	jan4 := views.DayOf(time.Date(w.Year, 1, 4, 0, 0, 0, 0, time.UTC))
	wd := int(jan4.Time().Weekday()+6) % 7 // Monday 0 .. Sunday 6
	return jan4 - views.Day(wd) + views.Day(7*(w.Num-1))
}

// Last returns the week's Sunday.
func (w Week) Last() views.Day { return w.Start() + 6 }

// End returns the instant the week ends: the next Monday at 00:00 UTC.
func (w Week) End() time.Time { return (w.Start() + 7).Time() }

// Prev returns the week before w.
func (w Week) Prev() Week { return WeekOf(w.Start() - 7) }

// Next returns the week after w.
func (w Week) Next() Week { return WeekOf(w.Start() + 7) }

// Before reports whether w comes before o.
func (w Week) Before(o Week) bool { return w.Start() < o.Start() }

// Listing is a listing's state at one instant, as an edition needs it.
type Listing struct {
	Store       views.Store
	ID          string
	Name        string
	Category    string
	FirstSeen   int64 // unix seconds
	Delisted    int64 // unix seconds; 0 while listed
	ReadAt      int64 // newest reading before the instant; 0 when none in the lookback
	Size        int64
	HasSize     bool
	Rating      float64
	Rated       bool
	RatingCount int64
}

// State is the state of every listing at one instant: what the data
// said up to then, and nothing after.
type State struct {
	At       time.Time
	Listings []Listing // sorted by store and id
}

// live reports whether l was live at the state's instant, as the store
// statistics count live listings: read (in the lookback before the
// instant) and not delisted by then. A listing need not have a size to be
// live (an apple app without ratings is live); only listings with one are
// ranked and summed in totalSize.
func (s *State) live(l *Listing) bool {
	at := s.At.Unix()
	return l.FirstSeen < at && (l.Delisted == 0 || l.Delisted >= at) && l.ReadAt != 0
}

// ranked reports whether l is live with a size at the state's instant.
func (s *State) ranked(l *Listing) bool { return s.live(l) && l.HasSize }

// FormatVersion names how an edition is computed and written: a fleet
// keeps each built edition with it (analytics.StoreEdition), and an edge
// loads only editions of its own format, building the others again. Raise
// it with any change to Build or to the fields of Edition.
const FormatVersion = 1

// Size is how many entries each list of an edition holds.
const Size = 10

// Entry is one listing in a list of an edition.
type Entry struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Category     string   `json:"category"`
	Size         *int64   `json:"size"`
	Change       *int64   `json:"change"`       // size change over the week
	Percent      *float64 `json:"percent"`      // of the size a week before
	Rank         *int     `json:"rank"`         // store rank at the end of the week
	PreviousRank *int     `json:"previousRank"` // store rank a week before
	Rating       *float64 `json:"rating"`
	RatingCount  *int64   `json:"ratingCount"`
}

// Totals are a store's totals at the end of a week and their change
// on the week before. LiveChange = Newcomers + Returning - Departures,
// always.
type Totals struct {
	Live            int   `json:"live"`            // live at the week's end (read, not delisted)
	LiveChange      int   `json:"liveChange"`      // live now minus live at the previous week's end
	TotalSize       int64 `json:"totalSize"`       // sum of the sizes of live listings with a size
	TotalSizeChange int64 `json:"totalSizeChange"` // totalSize minus the previous week's end's
	Newcomers       int   `json:"newcomers"`       // live now, not before, first seen this week
	Returning       int   `json:"returning"`       // live now, not before, first seen earlier (relisted, or read for the first time)
	Departures      int   `json:"departures"`      // live at the previous week's end, not now
}

// StoreEdition is one store's part of an edition.
type StoreEdition struct {
	Totals             Totals  `json:"totals"`
	TopClimbers        []Entry `json:"topClimbers"`        // by store-rank climb over the week
	Gainers            []Entry `json:"gainers"`            // by size change
	GainersPercent     []Entry `json:"gainersPercent"`     // by percent change, from at least RisingMinSize
	Newcomers          []Entry `json:"newcomers"`          // first seen during the week, by size
	Departures         []Entry `json:"departures"`         // delisted during the week, by last size
	BestRatedNewcomers []Entry `json:"bestRatedNewcomers"` // newcomers with at least MinRatings ratings, by rating
}

// MinRatings is the rating count a newcomer needs to be listed among
// the best rated.
const MinRatings = 10

// Edition is the weekly edition of one ISO week.
type Edition struct {
	Week   string    `json:"week"`
	Start  string    `json:"start"`  // Monday
	Last   string    `json:"end"`    // Sunday
	Cutoff time.Time `json:"cutoff"` // the instant the week ended: the edition reads only data from before it
	// Every change, percent and rank climb of the edition is between the
	// snapshots of these two dates, the last days of the week before and
	// of the week: /growth?from=changeFrom&to=changeTo gives the same.
	ChangeFrom string                   `json:"changeFrom"`
	ChangeTo   string                   `json:"changeTo"`
	Stores     map[string]*StoreEdition `json:"stores"`
}

// Build builds the edition of week w from the state at the week's
// end (cur) and at the previous week's end (prev). It is a deterministic
// function of the two states.
func Build(w Week, cur, prev *State) *Edition {
	e := &Edition{Week: w.String(), Start: w.Start().String(), Last: w.Last().String(), Cutoff: w.End(),
		ChangeFrom: w.Prev().Last().String(), ChangeTo: w.Last().String(), Stores: map[string]*StoreEdition{}}
	for _, s := range views.Stores {
		e.Stores[s.String()] = buildStore(s, w, cur, prev)
	}
	return e
}

// editionCand is a candidate for an edition list: a listing's position in
// the week-end slice (and in the previous week's, or -1) with its keys.
type editionCand struct {
	key, key2 float64
	i, j      int32
}

func buildStore(s views.Store, w Week, cur, prev *State) *StoreEdition {
	start, end := w.Start().Time().Unix(), w.End().Unix()
	curL, prevL := storeSlice(cur.Listings, s), storeSlice(prev.Listings, s)
	rankNow, rankPrev := cur.ranks(curL), prev.ranks(prevL)
	es := &StoreEdition{}
	var climbers, gainers, pct, newcomers, departures, rated []editionCand
	j := 0 // walks prevL alongside curL: both are sorted by id, and every listing of prev is in cur
	for i := range curL {
		l := &curL[i]
		c := editionCand{i: int32(i), j: -1}
		for j < len(prevL) && prevL[j].ID < l.ID {
			j++
		}
		var p *Listing
		if j < len(prevL) && prevL[j].ID == l.ID {
			p = &prevL[j]
		}
		wasLive, isLive := p != nil && prev.live(p), cur.live(l)
		if wasLive {
			c.j = int32(j)
			es.Totals.TotalSizeChange -= sizeOf(prev, p)
		}
		switch {
		case wasLive && !isLive:
			es.Totals.Departures++
			departures = append(departures, editionCand{float64(p.Size), 0, c.i, c.j})
		case !wasLive && isLive && l.FirstSeen >= start && l.FirstSeen < end:
			es.Totals.Newcomers++
			newcomers = append(newcomers, editionCand{float64(l.Size), 0, c.i, c.j})
			if l.Rated && l.RatingCount >= MinRatings {
				rated = append(rated, editionCand{views.RoundRating(l.Rating), float64(l.RatingCount), c.i, c.j})
			}
		case !wasLive && isLive:
			es.Totals.Returning++
		}
		if !isLive {
			continue
		}
		es.Totals.Live++
		es.Totals.TotalSize += sizeOf(cur, l)
		if !wasLive || !cur.ranked(l) || !prev.ranked(p) {
			continue
		}
		if climb := rankPrev[j] - rankNow[i]; climb > 0 && l.Size >= views.RisingMinSize(s) {
			climbers = append(climbers, editionCand{float64(climb), -float64(rankNow[i]), c.i, c.j})
		}
		if change := l.Size - p.Size; change > 0 {
			gainers = append(gainers, editionCand{float64(change), float64(l.Size), c.i, c.j})
			if p.Size >= views.RisingMinSize(s) {
				pct = append(pct, editionCand{percentOf(change, p.Size), float64(l.Size), c.i, c.j})
			}
		}
	}
	es.Totals.LiveChange = es.Totals.Newcomers + es.Totals.Returning - es.Totals.Departures
	es.Totals.TotalSizeChange += es.Totals.TotalSize

	entry := func(c editionCand) Entry {
		l := &curL[c.i]
		e := Entry{ID: l.ID, Name: l.Name, Category: l.Category}
		if l.HasSize {
			e.Size = ptr(l.Size)
		}
		if l.Rated {
			e.Rating, e.RatingCount = ptr(views.RoundRating(l.Rating)), ptr(l.RatingCount)
		}
		if cur.ranked(l) {
			e.Rank = ptr(int(rankNow[c.i]))
		}
		if c.j >= 0 && prev.ranked(&prevL[c.j]) {
			p := &prevL[c.j]
			e.PreviousRank = ptr(int(rankPrev[c.j]))
			if cur.ranked(l) {
				e.Change = ptr(l.Size - p.Size)
				if p.Size != 0 {
					e.Percent = ptr(percentOf(l.Size-p.Size, p.Size))
				}
			}
		}
		return e
	}
	top := func(cs []editionCand) []Entry {
		// Positions are in id order, so the last key is the id.
		slices.SortFunc(cs, func(a, b editionCand) int {
			return cmp.Or(cmp.Compare(b.key, a.key), cmp.Compare(b.key2, a.key2), cmp.Compare(a.i, b.i))
		})
		out := []Entry{}
		for _, c := range cs[:min(Size, len(cs))] {
			out = append(out, entry(c))
		}
		return out
	}
	es.TopClimbers, es.Gainers, es.GainersPercent = top(climbers), top(gainers), top(pct)
	es.Newcomers, es.Departures, es.BestRatedNewcomers = top(newcomers), top(departures), top(rated)
	return es
}

// sizeOf is l's size when it counts in st's totalSize (live with a size),
// else 0.
func sizeOf(st *State, l *Listing) int64 {
	if st.ranked(l) {
		return l.Size
	}
	return 0
}

// percentOf returns change as a percent of base, to two decimals.
func percentOf(change, base int64) float64 {
	return math.Round(float64(change)/float64(base)*10000) / 100
}

// ranks returns the store ranks of one store's slice, sorted by id, by
// position (0 for listings not ranked): by size, largest first, ties
// sharing a rank, as everywhere in the API.
func (s *State) ranks(ls []Listing) []int32 {
	live := make([]int32, 0, len(ls))
	for i := range ls {
		if s.ranked(&ls[i]) {
			live = append(live, int32(i))
		}
	}
	slices.SortFunc(live, func(a, b int32) int { return cmp.Compare(ls[b].Size, ls[a].Size) })
	// Ties share a rank: 1 plus the number of larger listings.
	out := make([]int32, len(ls))
	for r, i := range live {
		if r > 0 && ls[i].Size == ls[live[r-1]].Size {
			out[i] = out[live[r-1]]
		} else {
			out[i] = int32(r + 1)
		}
	}
	return out
}

func storeSlice(ls []Listing, s views.Store) []Listing {
	lo, _ := slices.BinarySearchFunc(ls, s, func(l Listing, s views.Store) int { return cmp.Compare(l.Store, s) })
	hi, _ := slices.BinarySearchFunc(ls, s+1, func(l Listing, s views.Store) int { return cmp.Compare(l.Store, s) })
	return ls[lo:hi]
}

func ptr[T any](v T) *T { return &v }

// Set holds every built weekly edition. It is immutable once
// published; the job that builds editions publishes a new one with each
// addition.
type Set struct {
	byWeek map[Week]*Edition
	latest Week
}

// NewSet returns a set of editions holding the given ones plus es.
func NewSet(old *Set, es ...*Edition) (*Set, error) {
	n := &Set{byWeek: map[Week]*Edition{}}
	if old != nil {
		for k, v := range old.byWeek {
			n.byWeek[k] = v
		}
		n.latest = old.latest
	}
	for _, e := range es {
		w, err := ParseWeek(e.Week)
		if err != nil {
			return nil, err
		}
		n.byWeek[w] = e
		if n.latest.Before(w) || n.latest == (Week{}) {
			n.latest = w
		}
	}
	return n, nil
}

// Get returns the edition of week w, or nil.
func (e *Set) Get(w Week) *Edition {
	if e == nil {
		return nil
	}
	return e.byWeek[w]
}

// Weeks returns the weeks that have an edition, newest first.
func (e *Set) Weeks() []Week {
	if e == nil {
		return nil
	}
	out := make([]Week, 0, len(e.byWeek))
	for w := range e.byWeek {
		out = append(out, w)
	}
	slices.SortFunc(out, func(a, b Week) int { return cmp.Compare(b.Start(), a.Start()) })
	return out
}

// Latest returns the newest edition, or nil.
func (e *Set) Latest() *Edition {
	if e == nil {
		return nil
	}
	return e.byWeek[e.latest]
}

// Len returns the number of editions.
func (e *Set) Len() int {
	if e == nil {
		return 0
	}
	return len(e.byWeek)
}

// Has reports whether week w has an edition.
func (e *Set) Has(w Week) bool { return e.Get(w) != nil }
