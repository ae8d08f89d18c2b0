package listq

import "github.com/edge-stats/edge/views"

// PageBefore finds where the page of q.PageSize listings that ends just
// before first (the first row of a page of q) starts: the position to
// pass List as after, which is nil when that page is the first. It walks
// q's order backwards from first, as a query of the opposite order
// resumed after first: the order with a sort value is one total order
// (value, then store and id), and its opposite is its exact reverse.
// ok is false when it cannot tell: first has no sort value (the
// listings without one are walked by store and id in both orders, so
// the opposite order does not reverse them) or is not in the engine, or
// the search ran out of its budget.
func (e *Engine) PageBefore(q *Query, first *views.Listing) (after *Pos, ok bool) {
	j := e.replica.Index(first)
	if j < 0 {
		return nil, false
	}
	at := e.posAt(j, q.Sort)
	if !at.HasKey {
		return nil, false
	}
	back := *q
	back.Asc = !q.Asc
	back.PageSize = q.PageSize + 1
	rows, _, _, partial := e.List(&back, &at)
	if partial {
		return nil, false
	}
	// The walk back leaves the listings with a value for those without
	// one, which come after every listing with a value in both orders:
	// they are not before first.
	n := 0
	for _, l := range rows {
		if !e.posAt(e.replica.Index(l), q.Sort).HasKey {
			break
		}
		n++
	}
	if n <= q.PageSize {
		return nil, true // at most a page before first: the first page
	}
	start := e.posAt(e.replica.Index(rows[q.PageSize]), q.Sort)
	return &start, true
}

// posAt returns listing j's position in the order s: its sort value
// (HasKey false when it has none) and its store and id.
func (e *Engine) posAt(j int32, s Sort) Pos {
	l := &e.ls[j]
	at := Pos{Store: l.Store, ID: l.ID}
	if byText(s) {
		at.HasKey, at.Name = true, e.val(j, s).text
	} else {
		at.Key, at.HasKey = e.sortKey(int(j), s)
	}
	return at
}
