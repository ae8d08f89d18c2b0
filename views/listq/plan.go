package listq

import (
	"math"
	"math/bits"
	"slices"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/textindex"
)

// plan is a query prepared against the columns.
type queryPlan struct {
	q                      *Query
	c                      *filterCols
	wantMeta, maskMeta     uint16
	delistedOnly, anyState bool
	minVer, maxVer         uint32
	none                   bool // no listing can match
	rMin, rMax             int16
	dayLo, dayHi           int64 // firstSeen bounds, unix
	delLo, delHi           int64
	has                    []uint64
	topic                  *[views.NumStores][]int32
	text                   []uint64 // listings whose text matches q.Q; nil: test each
	partial                bool     // the text search stopped at q.Deadline
	topicListed            bool     // the candidates are the topic's listings: no need to test the topic
	catListed              bool     // the candidates are the category's listings: no need to test the category
	cat                    uint16   // the category's catOrd, when q.Category is set and catOrd is kept
}

func (c *filterCols) plan(q *Query) *queryPlan {
	p := &queryPlan{q: q, c: c, maskMeta: metaCrawled, wantMeta: metaCrawled}
	p.delistedOnly = q.DelistedOnly || q.DelistedAfter != nil || q.DelistedBefore != nil
	switch {
	case p.delistedOnly:
		p.maskMeta, p.wantMeta = p.maskMeta|metaDelisted, p.wantMeta|metaDelisted
	case !q.IncludeDelisted:
		p.maskMeta |= metaDelisted
	}
	if q.Store != nil {
		p.maskMeta |= 7 << metaStoreShift
		p.wantMeta |= uint16(*q.Store) << metaStoreShift
	}
	if q.Kind != nil {
		if *q.Kind > 3 {
			p.none = true
		}
		p.maskMeta |= 3 << metaKindShift
		p.wantMeta |= uint16(*q.Kind&3) << metaKindShift
	}
	if q.Featured != nil {
		p.maskMeta |= metaFeatured
		if *q.Featured {
			p.wantMeta |= metaFeatured
		}
	}
	if q.Rated != nil {
		p.maskMeta |= metaRated
		if *q.Rated {
			p.wantMeta |= metaRated
		}
	}
	if q.HostAccessAll {
		p.maskMeta |= metaHostAll
		p.wantMeta |= metaHostAll
	}
	if q.ManifestVersion != nil {
		p.maskMeta |= 3 << metaMVShift
		switch *q.ManifestVersion {
		case 2:
			p.wantMeta |= 1 << metaMVShift
		case 3:
			p.wantMeta |= 2 << metaMVShift
		default:
			p.none = true
		}
	}
	if q.MinVersion != nil {
		var ok bool
		if p.minVer, ok = c.versionBound(*q.MinVersion, true); !ok {
			p.none = true
		}
	}
	if q.MaxVersion != nil {
		var ok bool
		if p.maxVer, ok = c.versionBound(*q.MaxVersion, false); !ok {
			p.none = true
		}
	}
	p.rMin, p.rMax = -1, math.MaxInt16
	if q.MinRating != nil {
		p.rMin = int16(math.Ceil(*q.MinRating*100 - 1e-9))
	}
	if q.MaxRating != nil {
		p.rMax = int16(math.Floor(*q.MaxRating*100 + 1e-9))
	}
	p.dayLo, p.dayHi = math.MinInt64, math.MaxInt64
	if q.FirstSeenAfter != nil {
		p.dayLo = q.FirstSeenAfter.Time().Unix()
	}
	if q.FirstSeenBefore != nil {
		p.dayHi = (*q.FirstSeenBefore + 1).Time().Unix()
	}
	p.delLo, p.delHi = math.MinInt64, math.MaxInt64
	if q.DelistedAfter != nil {
		p.delLo = q.DelistedAfter.Time().Unix()
	}
	if q.DelistedBefore != nil {
		p.delHi = (*q.DelistedBefore + 1).Time().Unix()
	}
	if q.OnlyWithValue && growthSort(q.Sort) {
		p.has = c.has[q.Sort]
	}
	if q.Category != nil && c.catOrd != nil {
		id, ok := c.catID[*q.Category]
		if !ok {
			p.none = true // no listing has it
		}
		p.cat = id + 1
	}
	return p
}

// flagsOnly reports whether p's query filters on nothing but the flag
// word (store, kind, state, featured, rated, host access, manifest
// version, access level) and a growth sort's figure: its total is then a
// sum over metaCount or hasMeta, and its matches are tested one by one as
// a walk meets them.
func (p *queryPlan) flagsOnly() bool {
	q := p.q
	return q.Q == "" && q.Category == nil && q.Permission == nil && q.Topic == nil && q.AlsoIn == nil &&
		q.MinInstalls == nil && q.MaxInstalls == nil && q.MinRating == nil && q.MaxRating == nil &&
		q.MinRatingCount == nil && q.MaxRatingCount == nil && p.minVer == 0 && p.maxVer == 0 &&
		q.UpdatedAfter == nil && q.UpdatedBefore == nil && q.FirstSeenAfter == nil && q.FirstSeenBefore == nil &&
		q.DelistedAfter == nil && q.DelistedBefore == nil && q.MinSize == nil && q.MaxSize == nil
}

// flagsTotal returns the number of listings that match a query of which
// flagsOnly holds.
func (p *queryPlan) flagsTotal() int {
	h := p.c.metaCount
	if p.has != nil {
		h = p.c.hasMeta[p.q.Sort]
	}
	var ok func(uint16) bool
	if al := p.q.MinAccessLevel; al != nil {
		ok = func(w uint16) bool {
			l := uint8(w>>metaAccessShift) & 7
			return l != 0 && l >= *al
		}
	}
	return h.count(p.maskMeta, p.wantMeta, ok)
}

// flagsTotalIn is flagsTotal within store s.
func (p *queryPlan) flagsTotalIn(s views.Store) int {
	if p.maskMeta&(7<<metaStoreShift) != 0 && views.Store(p.wantMeta>>metaStoreShift&7) != s {
		return 0
	}
	q := *p
	q.maskMeta |= 7 << metaStoreShift
	q.wantMeta = q.wantMeta&^(7<<metaStoreShift) | uint16(s)<<metaStoreShift
	return q.flagsTotal()
}

// storeRange returns the part of list (ascending listing indexes) that
// lies in the query's store, or list itself without a store filter.
func (p *queryPlan) storeRange(list []int32) []int32 {
	if p.q.Store == nil {
		return list
	}
	lo, hi := int32(p.c.storeStart[*p.q.Store]), int32(p.c.storeStart[*p.q.Store+1])
	i, _ := slices.BinarySearch(list, lo)
	j, _ := slices.BinarySearch(list[i:], hi)
	return list[i : i+j]
}

// candidates returns the listing indexes a query must test: a posting list
// when it filters by category or permission (the shorter), else nil for
// the scan range.
func (p *queryPlan) candidates() ([]int32, bool) {
	var list []int32
	found := false
	if p.q.Topic != nil {
		found, p.topicListed = true, true
		switch {
		case p.topic == nil:
		case p.q.Store != nil:
			list = p.topic[*p.q.Store]
		default:
			for _, l := range p.topic {
				list = append(list, l...)
			}
		}
	}
	if p.q.Category != nil {
		if cl := p.storeRange(p.c.category[*p.q.Category]); !found || len(cl) < len(list) {
			list, p.topicListed, p.catListed = cl, false, true
		}
		found = true
	}
	if p.q.Permission != nil {
		pl := p.storeRange(p.c.permission[*p.q.Permission])
		if !found || len(pl) < len(list) {
			list, p.topicListed, p.catListed = pl, false, false
		}
		found = true
	}
	if p.q.AlsoIn != nil {
		// The linked listings: match tests the store they link to.
		if ll := p.storeRange(p.c.links.Linked()); !found || len(ll) < len(list) {
			list, p.topicListed, p.catListed = ll, false, false
		}
		found = true
	}
	return list, found
}

// match tests listing i against every filter, reading only the columns the
// query needs and the listing itself only for text and the second of a
// category and permission pair.
func (p *queryPlan) match(ls []views.Listing, i int) bool {
	c, q := p.c, p.q
	if c.meta[i]&p.maskMeta != p.wantMeta {
		return false
	}
	if q.MinAccessLevel != nil {
		if al := uint8(c.meta[i]>>metaAccessShift) & 7; al == 0 || al < *q.MinAccessLevel {
			return false
		}
	}
	if q.MinSize != nil || q.MaxSize != nil {
		sz := c.usage[i]
		if views.Store(c.meta[i]>>metaStoreShift&7) == views.Apple {
			sz = c.ratingCount[i]
		}
		if sz < 0 || (q.MinSize != nil && sz < *q.MinSize) || (q.MaxSize != nil && sz > *q.MaxSize) {
			return false
		}
	}
	if q.Topic != nil && !p.topicListed && !slices.Contains(ls[i].Topics, *q.Topic) {
		return false
	}
	if q.AlsoIn != nil && !c.links.To(ls, i, *q.AlsoIn) {
		return false
	}
	if q.MinInstalls != nil || q.MaxInstalls != nil {
		u := c.usage[i]
		if u < 0 || (q.MinInstalls != nil && float64(u) < *q.MinInstalls) || (q.MaxInstalls != nil && float64(u) > *q.MaxInstalls) {
			return false
		}
	}
	if q.MinRating != nil || q.MaxRating != nil {
		if r := c.rating[i]; r < 0 || r < p.rMin || r > p.rMax {
			return false
		}
	}
	if q.MinRatingCount != nil || q.MaxRatingCount != nil {
		n := c.ratingCount[i]
		if c.rating[i] < 0 || n < 0 || (q.MinRatingCount != nil && n < *q.MinRatingCount) || (q.MaxRatingCount != nil && n > *q.MaxRatingCount) {
			return false
		}
	}
	if p.minVer != 0 || p.maxVer != 0 {
		v := c.version[i]
		if v == 0 || (p.minVer != 0 && v < p.minVer) || (p.maxVer != 0 && v > p.maxVer) {
			return false
		}
	}
	if q.UpdatedAfter != nil || q.UpdatedBefore != nil {
		u := c.updated[i]
		if !u.Valid() || (q.UpdatedAfter != nil && u < *q.UpdatedAfter) || (q.UpdatedBefore != nil && u > *q.UpdatedBefore) {
			return false
		}
	}
	if q.FirstSeenAfter != nil || q.FirstSeenBefore != nil {
		if fs := c.firstSeen[i]; fs < p.dayLo || fs >= p.dayHi {
			return false
		}
	}
	if p.delistedOnly {
		if d := c.delisted[i]; d < p.delLo || d >= p.delHi {
			return false
		}
	}
	if p.has != nil && p.has[i>>6]&(1<<(i&63)) == 0 {
		return false
	}
	if q.Category != nil && !p.catListed && p.cat != 0 && c.catOrd[i] != p.cat {
		return false
	}
	l := &ls[i]
	if q.Category != nil && !p.catListed && p.cat == 0 && l.Category != *q.Category {
		return false
	}
	if q.Permission != nil && !slices.Contains(l.Permissions, *q.Permission) {
		return false
	}
	if p.text != nil {
		return p.text[i>>6]&(1<<(i&63)) != 0
	}
	if q.Q != "" && !q.matchText(l) {
		return false
	}
	return true
}

// matching returns the bitmap of the listings that match p's query and
// their number; the caller hands the bitmap back with textindex.PutBitmap. Text is searched first, in the replica's text index; the
// other filters then test only its matches.
func (e *Engine) matching(p *queryPlan) (match []uint64, total int) {
	ls := e.ls
	q := p.q
	p.text, p.partial = e.textMatches(q)
	defer textindex.PutBitmap(p.text)
	match = textindex.GetBitmap((len(ls) + 63) / 64)
	test := func(i int) {
		if p.match(ls, i) {
			match[i>>6] |= 1 << (i & 63)
			total++
		}
	}
	if list, ok := p.candidates(); ok {
		for _, i := range list {
			test(int(i))
		}
		return match, total
	}
	lo, hi := 0, len(ls)
	if q.Store != nil {
		lo, hi = e.storeStart[*q.Store], e.storeStart[*q.Store+1]
	}
	// Without text, or with text that many listings hold (a common word:
	// "Pro" is in a fifth of the names), the column kernels test 64
	// listings a step, the text bitmap one of them; with a rarer word,
	// only its matches are tested.
	if p.text == nil || denseIn(p.text, lo, hi) {
		return match, p.scan(ls, match, lo, hi)
	}
	for w := lo >> 6; w <= (hi-1)>>6 && w < len(p.text); w++ {
		for b := p.text[w]; b != 0; b &= b - 1 {
			if i := w<<6 | bits.TrailingZeros64(b); i >= lo && i < hi {
				test(i)
			}
		}
	}
	return match, total
}

// denseIn reports whether more than one listing in 64 of [lo, hi) is set
// in b: then testing every listing by columns costs less than testing
// each set one by its fields.
func denseIn(b []uint64, lo, hi int) bool {
	n := 0
	for w := lo >> 6; w <= (hi-1)>>6 && w < len(b); w++ {
		n += bits.OnesCount64(b[w])
	}
	return n > (hi-lo)/64
}
