package listq

import (
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/textindex"
)

// Pos is where a page of /api/v1/listings ended: the last row's sort
// value, store and id. A next page resumes strictly after it in the current
// order, so a cursor stays valid across view rebuilds.
type Pos struct {
	HasKey bool        `json:"h"`
	Key    int64       `json:"k,omitempty"`
	Name   string      `json:"n,omitempty"` // the sort value of the name sort
	Store  views.Store `json:"s"`
	ID     string      `json:"i"`
}

// lazyTests is how many listings a v1 query without a posting list tests
// one by one before it marks every match in a bitmap instead; a query with
// text, whose test reads the listing's strings, tests lazyTextTests.
const (
	lazyTests     = 1 << 15
	lazyTextTests = 1 << 11
)

// List runs a v1 listing query: matching live listings in the order of
// q.Sort and q.Asc (missing values last), up to q.PageSize of them after
// the position after (nil for the first page). more says whether rows
// remain after the page. partial is true when the text search ran past
// q.Deadline: the page then comes from the text scanned until then.
func (e *Engine) List(q *Query, after *Pos) (page []*views.Listing, last Pos, more, partial bool) {
	ls := e.ls
	p := e.cols.plan(q)
	if p.none {
		return nil, last, false, false
	}
	if q.Topic != nil {
		p.topic, _ = e.topics(*q.Topic)
	}
	w := e.newWalk(q)
	w.clipToFilter(q)
	if after != nil {
		w.seek(after)
	}
	// A query without a posting list to start from tests listings as the
	// walk meets them: a page of a common query is found within a few
	// hundred positions, where a bitmap of every match would test the
	// whole store (and text search, verify every listing holding a common
	// word). A selective query that has not filled its page after
	// lazyTests tests (lazyTextTests with text) switches to the bitmap,
	// so that it costs at most a little more than the bitmap alone. A
	// query with few matches for the positions it would walk sorts its
	// matches instead.
	var match []uint64
	lazy := q.Topic == nil && q.Category == nil && q.Permission == nil && q.AlsoIn == nil
	budget := lazyTests
	if q.Q != "" {
		budget = lazyTextTests
	}
	if !lazy {
		var total int
		match, total = e.matching(p)
		if w.sortCheaper(total, q.PageSize+1) {
			vals := w.selectFirst(match, q.PageSize+1, after)
			textindex.PutBitmap(match)
			for _, v := range vals[:min(len(vals), q.PageSize)] {
				page = append(page, &ls[v.j])
			}
			if len(page) > 0 {
				last = e.posAt(vals[len(page)-1].j, q.Sort)
			}
			return page, last, len(vals) > q.PageSize, p.partial
		}
		w.listSparse(match, q.PageSize+1, after)
	}
	defer func() { textindex.PutBitmap(match) }()
	tests := 0
	cut := false    // text tested past q.Deadline: the walk stops, partial
	resort := false // the bitmap holds few matches: sort them rather than walk on
	isMatch := func(j int32) bool {
		if match == nil {
			if tests++; tests <= budget {
				// Text tested listing by listing keeps the search's
				// budget too: the clock is read every 256 tests.
				if q.Q != "" && tests&255 == 1 && !q.Deadline.IsZero() && time.Now().After(q.Deadline) {
					cut = true
					w.halt()
					return false
				}
				return p.match(ls, int(j))
			}
			var total int
			match, total = e.matching(p)
			if w.sortCheaper(total, q.PageSize+1-len(page)) {
				resort = true
				w.halt()
				return false
			}
		}
		return match[j>>6]&(1<<(j&63)) != 0
	}
	for {
		j, _, ok := w.next(isMatch)
		if cut {
			return page, last, false, true
		}
		if resort {
			// A rare word: what the walk found so far, then the rest of
			// the matches after it, sorted (the walk would cross every
			// position of the order to find them).
			from := after
			if len(page) > 0 {
				from = &last
			}
			need := q.PageSize + 1 - len(page)
			vals := w.selectFirst(match, need, from)
			for _, v := range vals[:min(len(vals), need-1)] {
				page = append(page, &ls[v.j])
				last = e.posAt(v.j, q.Sort)
			}
			return page, last, len(vals) == need, p.partial
		}
		if !ok {
			return page, last, false, p.partial
		}
		if len(page) == q.PageSize {
			return page, last, true, p.partial
		}
		page = append(page, &ls[j])
		last = e.posAt(j, q.Sort)
	}
}
