package listq

import (
	"time"
	"unicode/utf8"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/textindex"
)

// Query is a query of listings: the filters, sort and page of
// /api/extensions (legacy) and /api/v1/listings, parsed. Engine.Page
// answers it by page number and Engine.List by cursor; both run the same
// plan over the filter columns (filtercols.go). Every field is part of an
// answer's cache key but for Deadline (v1.QueryKey).
type Query struct {
	Store           *views.Store
	Q               string
	Category        *string
	Kind            *views.Kind
	Featured        *bool
	MinInstalls     *float64
	MaxInstalls     *float64
	Rated           *bool
	MinRating       *float64
	MaxRating       *float64
	MinRatingCount  *int64
	MaxRatingCount  *int64
	MinVersion      *string
	MaxVersion      *string
	UpdatedAfter    *views.Day
	UpdatedBefore   *views.Day
	FirstSeenAfter  *views.Day
	FirstSeenBefore *views.Day
	IncludeDelisted bool
	DelistedOnly    bool
	DelistedAfter   *views.Day
	DelistedBefore  *views.Day
	ManifestVersion *uint8
	Permission      *string
	HostAccessAll   bool
	MinAccessLevel  *uint8
	Sort            Sort // the order (see catalogue)
	// OnlyWithValue lists only the listings with a value of a growth
	// Sort (the legacy API's contract); otherwise every listing is
	// listed, those without a value last.
	OnlyWithValue bool
	Asc           bool // ascending; missing values still last
	Page          int  // from 1
	PageSize      int  // 1 to 200

	// v1 only.
	NameOnly bool         // q matches name and developer only
	MinSize  *int64       // bounds on size (needs Store: size means ratings on apple)
	MaxSize  *int64       //
	Topic    *string      // live listings with this tag
	AlsoIn   *views.Store // listings linked to the same extension in this store (Figures.Links)

	// Deadline, when not zero, is the text search's time budget: past it
	// the search stops and the answer is partial (see Engine.List).
	Deadline time.Time
}

// matchText matches q against name and developer, and from three
// characters also the description on chrome, edge and firefox, ignoring
// case.
func (q *Query) matchText(l *views.Listing) bool {
	if textindex.ContainsFold(l.Name, q.Q) || textindex.ContainsFold(l.Developer, q.Q) {
		return true
	}
	return !q.NameOnly && utf8.RuneCountInString(q.Q) >= 3 && l.Store != views.Apple && l.Store != views.GooglePlay && textindex.ContainsFold(l.Description, q.Q)
}

// Page runs q by page number (the legacy API): the number of matching listings and the listings of the
// requested page, in order; partial is true when q's text search ran past
// q.Deadline (total and page then hold what it found until then).
func (e *Engine) Page(q *Query) (total int, page []*views.Listing, partial bool) {
	ls := e.ls
	p := e.cols.plan(q)
	if p.none {
		return 0, nil, false
	}
	// A query on flags alone counts its total from the flag histograms
	// and tests listings as the walk meets them; any other builds the
	// bitmap of its matches, which counts them.
	var match []uint64
	isMatch := func(j int32) bool { return p.match(ls, int(j)) }
	if p.flagsOnly() {
		total = p.flagsTotal()
	} else {
		match, total = e.matching(p)
		defer textindex.PutBitmap(match)
		isMatch = func(j int32) bool { return match[j>>6]&(1<<(j&63)) != 0 }
	}
	partial = p.partial
	skip := (q.Page - 1) * q.PageSize
	if skip >= total {
		return total, nil, partial
	}
	w := e.newWalk(q)
	w.clipToFilter(q)
	if match != nil && w.sortCheaper(total, skip+q.PageSize) {
		vals := w.selectFirst(match, skip+q.PageSize, nil)
		for _, v := range vals[min(skip, len(vals)):] {
			page = append(page, &ls[v.j])
		}
		return total, page, partial
	}
	if match != nil {
		w.listSparse(match, skip+q.PageSize, nil)
	} else {
		w.dropEmpty(p.flagsTotalIn)
	}
	for len(page) < q.PageSize {
		j, _, ok := w.next(isMatch)
		if !ok {
			break
		}
		if skip > 0 {
			skip--
			continue
		}
		page = append(page, &ls[j])
	}
	return total, page, partial
}

// textMatches is the text filter of one query: the bitmap of listings that
// match, or the per-listing test when the replica has no index. Only the
// listings of the query's store are searched by name and description.
func (e *Engine) textMatches(q *Query) (match []uint64, partial bool) {
	if q.Q == "" {
		return nil, false
	}
	lo, hi := 0, len(e.ls)
	if q.Store != nil {
		lo, hi = e.storeStart[*q.Store], e.storeStart[*q.Store+1]
	}
	return e.recent.Search(e.replica.Text(), q.Q, !q.NameOnly, lo, hi, q.Deadline)
}

// Count returns how many listings List lists for q (every page of it):
// the listings that pass its filters and its text, as Page counts them
// (from the flag histograms, or the bitmap of its matches). partial is
// true when its text search ran past q.Deadline: total then counts the
// matches found until then.
func (e *Engine) Count(q *Query) (total int, partial bool) {
	p := e.cols.plan(q)
	if p.none {
		return 0, false
	}
	if q.Topic != nil {
		p.topic, _ = e.topics(*q.Topic)
	}
	if p.flagsOnly() {
		return p.flagsTotal(), false
	}
	match, total := e.matching(p)
	textindex.PutBitmap(match)
	return total, p.partial
}
