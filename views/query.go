package views

import (
	"time"
	"unicode/utf8"
)

// ListingQuery is a query of listings: the filters, sort and page of
// /api/extensions (legacy) and /api/v1/listings, parsed. Figures.Query
// answers it by page number and Figures.List by cursor; both run the same
// plan over the filter columns (filtercols.go). Every field is part of an
// answer's cache key but for Deadline (answer.Key.Query).
type ListingQuery struct {
	Store           *Store
	Q               string
	Category        *string
	Kind            *Kind
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
	UpdatedAfter    *Day
	UpdatedBefore   *Day
	FirstSeenAfter  *Day
	FirstSeenBefore *Day
	IncludeDelisted bool
	DelistedOnly    bool
	DelistedAfter   *Day
	DelistedBefore  *Day
	ManifestVersion *uint8
	Permission      *string
	HostAccessAll   bool
	MinAccessLevel  *uint8
	Sort            Sort // the order (see catalogue)
	Asc             bool // ascending; missing values still last
	Page            int  // from 1
	PageSize        int  // 1 to 200

	// v1 only.
	NameOnly bool    // q matches name and developer only
	MinSize  *int64  // bounds on size (needs Store: size means ratings on apple)
	MaxSize  *int64  //
	Topic    *string // live listings with this tag
	AlsoIn   *Store  // listings linked to the same extension in this store (Figures.Links)

	// Deadline, when not zero, is the text search's time budget: past it
	// the search stops and the answer is partial (see Figures.List).
	Deadline time.Time
}

// HostReachesAll reports whether a host pattern grants every website.
func HostReachesAll(h string) bool {
	switch h {
	case "<all_urls>", "*://*/*", "http://*/*", "https://*/*", "*://*", "http://*/", "https://*/":
		return true
	}
	return false
}

// matchText matches q against name and developer, and from three
// characters also the description on chrome, edge and firefox, ignoring
// case.
func (q *ListingQuery) matchText(l *Listing) bool {
	if containsFold(l.Name, q.Q) || containsFold(l.Developer, q.Q) {
		return true
	}
	return !q.NameOnly && utf8.RuneCountInString(q.Q) >= 3 && l.Store != Apple && l.Store != GooglePlay && containsFold(l.Description, q.Q)
}

// Query runs q: the number of matching listings and the listings of the
// requested page, in order; partial is true when q's text search ran past
// q.Deadline (total and page then hold what it found until then).
func (f *Figures) Query(q *ListingQuery) (total int, page []*Listing, partial bool) {
	ls := f.replica.listings
	p := f.cols.plan(q)
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
		match, total = f.matching(p)
		defer putBitmap(match)
		isMatch = func(j int32) bool { return match[j>>6]&(1<<(j&63)) != 0 }
	}
	partial = p.partial
	skip := (q.Page - 1) * q.PageSize
	if skip >= total {
		return total, nil, partial
	}
	w := f.newWalk(q)
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
