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
	Sort            int  // index in SortNames, or one of the v1-only Sort* orders
	Asc             bool // ascending; missing values still last
	Page            int  // from 1
	PageSize        int  // 1 to 200

	// v1 only.
	NameOnly bool    // q matches name and developer only
	MinSize  *int64  // bounds on size (needs Store: size means ratings on apple)
	MaxSize  *int64  //
	Topic    *string // live listings with this tag

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
	match, total := f.matching(p)
	defer putBitmap(match)
	partial = p.partial
	skip := (q.Page - 1) * q.PageSize
	if skip >= total {
		return total, nil, partial
	}
	order, present := f.orders.order[q.Sort], f.orders.present[q.Sort]
	take := func(j int32) bool {
		if match[j>>6]&(1<<(j&63)) == 0 {
			return false
		}
		if skip > 0 {
			skip--
			return false
		}
		page = append(page, &ls[j])
		return len(page) == q.PageSize
	}
	if q.Asc {
		for p := present - 1; p >= 0; p-- {
			if take(order[p]) {
				return total, page, partial
			}
		}
	} else {
		for p := 0; p < present; p++ {
			if take(order[p]) {
				return total, page, partial
			}
		}
	}
	for p := present; p < len(order); p++ { // missing values last, either way
		if take(order[p]) {
			return total, page, partial
		}
	}
	return total, page, partial
}
