package listq

import (
	"slices"

	"github.com/edge-stats/edge/views"
)

// The brute-force matcher: every filter of a Query tested on one
// listing, plainly, as the specification reads. It is the oracle the
// query engine (filterCols and queryPlan) is tested against.

// match reports whether l passes every filter of q, the slow and plain way.
func (q *Query) match(l *views.Listing) bool {
	if !l.Crawled() {
		return false
	}
	delistedOnly := q.DelistedOnly || q.DelistedAfter != nil || q.DelistedBefore != nil
	switch {
	case delistedOnly && l.Delisted == 0:
		return false
	case !delistedOnly && !q.IncludeDelisted && l.Delisted != 0:
		return false
	}
	if q.Store != nil && l.Store != *q.Store {
		return false
	}
	if q.Kind != nil && l.Kind != *q.Kind {
		return false
	}
	if q.Category != nil && l.Category != *q.Category {
		return false
	}
	if q.Featured != nil && l.Featured != *q.Featured {
		return false
	}
	if q.MinInstalls != nil || q.MaxInstalls != nil {
		u, ok := l.Usage()
		if !ok || (q.MinInstalls != nil && float64(u) < *q.MinInstalls) || (q.MaxInstalls != nil && float64(u) > *q.MaxInstalls) {
			return false
		}
	}
	rating, rated := l.Rating()
	if q.Rated != nil && rated != *q.Rated {
		return false
	}
	if q.MinRating != nil || q.MaxRating != nil {
		r := views.RoundRating(rating)
		if !rated || (q.MinRating != nil && r < *q.MinRating) || (q.MaxRating != nil && r > *q.MaxRating) {
			return false
		}
	}
	if q.MinRatingCount != nil || q.MaxRatingCount != nil {
		n, ok := l.RatingCount()
		if !rated || !ok || (q.MinRatingCount != nil && n < *q.MinRatingCount) || (q.MaxRatingCount != nil && n > *q.MaxRatingCount) {
			return false
		}
	}
	if q.MinVersion != nil {
		if c, ok := views.CompareVersions(l.Version, *q.MinVersion); !ok || c < 0 {
			return false
		}
	}
	if q.MaxVersion != nil {
		if c, ok := views.CompareVersions(l.Version, *q.MaxVersion); !ok || c > 0 {
			return false
		}
	}
	if q.UpdatedAfter != nil || q.UpdatedBefore != nil {
		if !l.Updated.Valid() || (q.UpdatedAfter != nil && l.Updated < *q.UpdatedAfter) || (q.UpdatedBefore != nil && l.Updated > *q.UpdatedBefore) {
			return false
		}
	}
	if !inDays(l.FirstSeen, q.FirstSeenAfter, q.FirstSeenBefore) {
		return false
	}
	if (q.DelistedAfter != nil || q.DelistedBefore != nil) && !inDays(l.Delisted, q.DelistedAfter, q.DelistedBefore) {
		return false
	}
	if q.ManifestVersion != nil && l.ManifestVersion != *q.ManifestVersion {
		return false
	}
	if q.Permission != nil && !slices.Contains(l.Permissions, *q.Permission) {
		return false
	}
	if q.HostAccessAll && !slices.ContainsFunc(l.HostAccess, views.HostReachesAll) && !slices.Contains(l.Permissions, "<all_urls>") {
		return false
	}
	if q.MinAccessLevel != nil && (l.AccessLevel == 0 || l.AccessLevel < *q.MinAccessLevel) {
		return false
	}
	if q.Q != "" && !q.matchText(l) {
		return false
	}
	if q.MinSize != nil || q.MaxSize != nil {
		sz, ok := l.Size()
		if !ok || (q.MinSize != nil && sz < *q.MinSize) || (q.MaxSize != nil && sz > *q.MaxSize) {
			return false
		}
	}
	if q.Topic != nil && (!slices.Contains(l.Topics, *q.Topic) || !l.Live()) {
		return false
	}
	if q.OnlyWithValue && growthSort(q.Sort) {
		if _, ok := sortKeyOf(l, q.Sort); !ok {
			return false // a growth sort lists only listings with the figure
		}
	}
	return true
}

// inDays reports whether the unix time t falls within the inclusive days.
func inDays(t int64, after, before *views.Day) bool {
	if after != nil && t < after.Time().Unix() {
		return false
	}
	if before != nil && t >= (*before+1).Time().Unix() {
		return false
	}
	return true
}
