package views

import (
	"cmp"
	"sort"
	"strings"
)

// ListPos is where a page of /api/v1/listings ended: the last row's sort
// value, store and id. A next page resumes strictly after it in the current
// order, so a cursor stays valid across view rebuilds.
type ListPos struct {
	HasKey bool   `json:"h"`
	Key    int64  `json:"k,omitempty"`
	Name   string `json:"n,omitempty"` // the sort value of the name sort
	Store  Store  `json:"s"`
	ID     string `json:"i"`
}

// lazyTests is how many listings a v1 query without text or posting list
// tests one by one before it marks every match in a bitmap instead.
const lazyTests = 1 << 15

// List runs a v1 listing query: matching live listings in the order of
// q.Sort and q.Asc (missing values last), up to q.PageSize of them after
// the position after (nil for the first page). more says whether rows
// remain after the page. partial is true when the text search ran past
// q.Deadline: the page then comes from the text scanned until then.
func (f *Figures) List(q *ListingQuery, after *ListPos) (page []*Listing, last ListPos, more, partial bool) {
	ls := f.replica.listings
	p := f.cols.plan(q)
	if p.none {
		return nil, last, false, false
	}
	if q.Topic != nil {
		i := sort.Search(len(f.topics), func(i int) bool { return f.topics[i].Slug >= *q.Topic })
		if i < len(f.topics) && f.topics[i].Slug == *q.Topic {
			p.topic = &f.topics[i]
		}
	}
	// A query without text or a posting list to start from tests listings
	// as the walk meets them: a page of a common query is found within a
	// few hundred positions, where a bitmap of every match would test the
	// whole store. A selective query that has not filled its page after
	// lazyTests tests switches to the bitmap, so that it costs at most one
	// pass more than the bitmap alone.
	var match []uint64
	lazy := q.Q == "" && q.Topic == nil && q.Category == nil && q.Permission == nil
	if !lazy {
		match, _ = f.matching(p)
	}
	defer func() { putBitmap(match) }()
	tests := 0
	isMatch := func(j int32) bool {
		if match == nil {
			if tests++; tests <= lazyTests {
				return p.match(ls, int(j))
			}
			match, _ = f.matching(p)
		}
		return match[j>>6]&(1<<(j&63)) != 0
	}
	order, present := f.orders.order[q.Sort], f.orders.present[q.Sort]
	isName := q.Sort == SortIndex("name")
	// cmpAt compares the listing at order position pos with after, in the
	// descending walk's order: -1 before it, 0 the same, +1 after it.
	cmpAt := func(pos int) int {
		j := int(order[pos])
		l := &ls[j]
		if pos < present {
			if !after.HasKey {
				return -1 // after sits in the missing part, which comes last
			}
			if isName {
				if c := strings.Compare(after.Name, l.Name); c != 0 {
					return c // descending: a greater name comes first
				}
			} else {
				k, _ := f.sortKey(j, q.Sort)
				if k != after.Key {
					return cmp.Compare(after.Key, k)
				}
			}
		} else if after.HasKey {
			return 1
		}
		return cmp.Or(cmp.Compare(l.Store, after.Store), cmp.Compare(l.ID, after.ID))
	}
	take := func(pos int) bool { // reports whether the page is full
		j := order[pos]
		if !isMatch(j) {
			return false
		}
		if len(page) == q.PageSize {
			more = true
			return true
		}
		page = append(page, &ls[j])
		l := &ls[j]
		last = ListPos{HasKey: pos < present, Store: l.Store, ID: l.ID}
		if last.HasKey {
			if isName {
				last.Name = l.Name
			} else {
				last.Key, _ = f.sortKey(int(j), q.Sort)
			}
		}
		return false
	}
	startWith, startMissing := 0, present // first positions to visit in each part
	if q.Asc {
		startWith = present - 1
	}
	if after != nil {
		if after.HasKey {
			if q.Asc {
				startWith = sort.Search(present, func(p int) bool { return cmpAt(p) >= 0 }) - 1
			} else {
				startWith = sort.Search(present, func(p int) bool { return cmpAt(p) > 0 })
			}
		} else {
			startWith = -1
			if !q.Asc {
				startWith = present
			}
			startMissing = present + sort.Search(len(order)-present, func(k int) bool { return cmpAt(present+k) > 0 })
		}
	}
	if q.Asc {
		for pos := startWith; pos >= 0; pos-- {
			if take(pos) {
				return page, last, more, p.partial
			}
		}
	} else {
		for pos := startWith; pos < present; pos++ {
			if take(pos) {
				return page, last, more, p.partial
			}
		}
	}
	for pos := startMissing; pos < len(order); pos++ {
		if take(pos) {
			return page, last, more, p.partial
		}
	}
	return page, last, more, p.partial
}
