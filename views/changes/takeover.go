package changes

import (
	"cmp"
	"slices"
	"strconv"
)

// TakeoverWindow is how long after a change of developer a widening of
// what the listing may do still makes the two a takeover.
const TakeoverWindow = 90 * 24 * 60 * 60 // seconds

// Widens reports whether c lets its listing do more than before: it adds
// a permission, widens its host access (Change.Widened), or raises its
// access level.
func (c *Change) Widens() bool {
	switch c.Kind {
	case Permissions:
		return c.nAdded > 0
	case HostAccess:
		return c.Widened
	case AccessLevel:
		before, err1 := strconv.Atoi(c.Before)
		after, err2 := strconv.Atoi(c.After)
		return err1 == nil && err2 == nil && after > before
	}
	return false
}

// takeovers returns the takeovers cs holds (cs in feed order, without
// takeovers), in feed order. A takeover is a change of developer followed,
// in the same crawl or within TakeoverWindow after and before the
// listing's next change of developer, by a widening (Widens): one per
// change of developer, at the crawl of its first widening. Its Before and
// After are the old and new developer; its Set the permissions and host
// patterns that crawl added (those of the widening changes only); Via the
// kind of that crawl's first widening change, the event it joins with the
// change of developer (Log.Joins).
func takeovers(cs []Change) []Change {
	var idx []int32
	for i := range cs {
		if k := cs[i].Kind; k == Developer || k == Permissions || k == HostAccess || k == AccessLevel {
			idx = append(idx, int32(i))
		}
	}
	if len(idx) == 0 {
		return nil
	}
	// By listing, then crawl; a crawl's change of developer before its
	// widenings, which belong to the new owner.
	slices.SortFunc(idx, func(a, b int32) int {
		x, y := &cs[a], &cs[b]
		if c := cmp.Compare(x.Store, y.Store); c != 0 {
			return c
		}
		if c := cmp.Compare(x.ID, y.ID); c != 0 {
			return c
		}
		if c := cmp.Compare(x.At, y.At); c != 0 {
			return c
		}
		if dx, dy := x.Kind == Developer, y.Kind == Developer; dx != dy {
			if dx {
				return -1
			}
			return 1
		}
		return cmp.Compare(x.Kind, y.Kind)
	})
	var out []Change
	var open *Change // the listing's last change of developer, not yet a takeover
	for n, i := range idx {
		c := &cs[i]
		if n > 0 {
			if p := &cs[idx[n-1]]; p.Store != c.Store || p.ID != c.ID {
				open = nil
			}
		}
		if c.Kind == Developer {
			open = c
			continue
		}
		if open == nil || !c.Widens() || c.At-open.At > TakeoverWindow {
			continue
		}
		t := Change{At: c.At, ID: c.ID, Store: c.Store, Kind: Takeover, Via: c.Kind, Before: open.Before, After: open.After}
		// What the crawl added: its widening changes' additions.
		for k := n; k < len(idx); k++ {
			w := &cs[idx[k]]
			if w.Store != c.Store || w.ID != c.ID || w.At != c.At {
				break
			}
			if w.Widens() && w.Kind != AccessLevel {
				t.Set = append(t.Set, w.Added()...)
			}
		}
		t.nAdded = uint16(len(t.Set))
		out = append(out, t)
		open = nil
	}
	slices.SortFunc(out, func(a, b Change) int { return PosOf(&a).Compare(PosOf(&b)) })
	return out
}

// mergeSorted returns cs with more merged in, both in feed order and
// with no place in common: from the back, in cs's own array grown by
// len(more), so that a log of millions of changes is not sorted again
// for a few takeovers.
func mergeSorted(cs, more []Change) []Change {
	if len(more) == 0 {
		return cs
	}
	i, j := len(cs)-1, len(more)-1
	cs = append(cs, more...)
	for w := len(cs) - 1; j >= 0; w-- {
		if i >= 0 && PosOf(&cs[i]).Compare(PosOf(&more[j])) > 0 {
			cs[w] = cs[i]
			i--
		} else {
			cs[w] = more[j]
			j--
		}
	}
	return cs
}

// Joins returns the two events takeover t joins: the change of developer
// (the listing's last before or at t) and the widening change of t's
// crawl (t.Via). ok is false when t is not a takeover of l.
func (l *Log) Joins(t *Change) (developer, widening Pos, ok bool) {
	if t.Kind != Takeover || l.Len() == 0 {
		return Pos{}, Pos{}, false
	}
	widening = Pos{At: t.At, Store: t.Store, ID: t.ID, Kind: t.Via}
	after := Pos{At: t.At, Store: t.Store, ID: t.ID, Kind: Takeover}
	// The listing's changes before the takeover, newest first: its change
	// of developer is the first of that kind.
	for before := after; ; {
		cs, more := l.Listing(t.Store, t.ID, before, 64)
		for _, c := range cs {
			if c.Kind == Developer {
				return PosOf(c), widening, true
			}
		}
		if !more || len(cs) == 0 {
			return Pos{}, Pos{}, false
		}
		before = PosOf(cs[len(cs)-1])
	}
}

// Derived returns the count of takeovers in l.
func (l *Log) Derived() int {
	if l == nil {
		return 0
	}
	return l.derived
}

// Takeovers returns the takeovers of cs, the changes of one or more
// listings in feed order without takeovers, in feed order: what a Log
// derives, for a reader that streams a listing's changes instead of
// keeping a log (the lake's change table).
func Takeovers(cs []Change) []Change { return takeovers(cs) }
