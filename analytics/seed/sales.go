package seed

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/views"
)

// saleShare is the share of chrome and edge extensions sold to a new
// developer in their last months, on top of the sales of history: the
// change feed's takeovers (a new owner, then an update that asks for
// more) and their near misses, so that the demo dataset holds each.
const saleShare = 0.08

// saleWindow is how far back from the data's end a staged sale lies:
// within the change window the edges keep by default.
const saleWindow = 170 * 24 * time.Hour

// takeoverDays is the takeover rule's window (changes.TakeoverWindow).
const takeoverDays = 90 * 24 * time.Hour

// stageSale makes versions (a listing's, oldest first, its newest last)
// tell of a sale in its last months, for saleShare of the chrome and edge
// extensions: the versions before one update name another developer, and
// then, by the draw, the update that sold it, or a later one within 90
// days, adds a permission (a takeover), an update more than 90 days later
// adds one (a near miss), or none does (a new owner who asks for nothing
// more). It draws from a source of its own (listing i's), so that the
// rest of the dataset is the same with or without it, and changes only
// the versions before the newest (their developer and permissions): the
// listing as it is now is the same.
func (g *Generator) stageSale(i int, p *plan, versions []analytics.ListingRow) []analytics.ListingRow {
	if !p.store.ReadsManifests() || len(versions) < 2 || versions[len(versions)-1].Kind == views.KindTheme {
		return versions
	}
	r := rand.New(rand.NewPCG(g.o.Seed^0x73616c65, uint64(i)))
	if r.Float64() >= saleShare {
		return versions
	}
	var recent []int // updates in the data's last months, the first read not one
	for k := 1; k < len(versions); k++ {
		if versions[k].DelistedAt == nil && g.o.End.Sub(versions[k].CrawledAt) <= saleWindow {
			recent = append(recent, k)
		}
	}
	if len(recent) == 0 {
		return versions
	}
	// The update that widens: the sale's own, the next within 90 days,
	// the first more than 90 days after, or none; each drawn among the
	// sales it can follow.
	gap := func(k, j int) time.Duration { return versions[j].CrawledAt.Sub(versions[k].CrawledAt) }
	widens := map[int]int{} // sale -> the update that widens
	switch u := r.Float64(); {
	case u < 0.45:
		for _, k := range recent {
			widens[k] = k
		}
	case u < 0.7:
		for _, k := range recent {
			if k+1 < len(versions) && gap(k, k+1) <= takeoverDays {
				widens[k] = k + 1
			}
		}
	case u < 0.85:
		for _, k := range recent {
			for j := k + 1; j < len(versions); j++ {
				if gap(k, j) > takeoverDays {
					widens[k] = j
					break
				}
			}
		}
		if len(widens) == 0 {
			return g.lateWidening(r, versions)
		}
	}
	k, w := recent[r.IntN(len(recent))], -1
	if len(widens) > 0 {
		keys := make([]int, 0, len(widens))
		for k := range widens {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		k = keys[r.IntN(len(keys))]
		w = widens[k]
	}
	old := devFirst[r.IntN(len(devFirst))] + " " + devSecond[r.IntN(len(devSecond))]
	if old == versions[k].Developer {
		return versions
	}
	for v := range versions[:k] {
		versions[v].Developer = old
	}
	if w < 0 || len(versions[w].Permissions) == 0 || versions[w].DelistedAt != nil {
		return versions
	}
	// Added by update w: no version before it has it.
	perm := versions[w].Permissions[r.IntN(len(versions[w].Permissions))]
	for v := range versions[:w] {
		versions[v].Permissions = slices.DeleteFunc(slices.Clone(versions[v].Permissions), func(s string) bool { return s == perm })
	}
	return versions
}

// lateWidening sells the listing in an update of its own, inserted in
// the data's last months between two of its versions, and widens it in
// another 91 to 94 days later, before the next (a near miss of the
// takeover rule): both copy the version before them, the sale with the
// developer of the versions after it (those before it get another), the
// widening with one of the next version's permissions added, which no
// version before it has. versions is returned as it was when no two
// versions leave room, or the history holds a delisting.
func (g *Generator) lateWidening(r *rand.Rand, versions []analytics.ListingRow) []analytics.ListingRow {
	for _, v := range versions {
		if v.DelistedAt != nil {
			return versions
		}
	}
	lag := takeoverDays + time.Duration(24+r.IntN(72))*time.Hour
	from := g.o.End.Add(-saleWindow)
	var room []int // j: the sale fits after version j, the widening before version j+1
	for j := 0; j+1 < len(versions); j++ {
		sale := versions[j].CrawledAt.Add(24 * time.Hour)
		if sale.Before(from) {
			sale = from
		}
		if versions[j+1].CrawledAt.Sub(sale) > lag+24*time.Hour && len(versions[j+1].Permissions) > 0 {
			room = append(room, j)
		}
	}
	if len(room) == 0 {
		return versions
	}
	j := room[r.IntN(len(room))]
	old := devFirst[r.IntN(len(devFirst))] + " " + devSecond[r.IntN(len(devSecond))]
	if old == versions[j+1].Developer {
		return versions
	}
	perm := versions[j+1].Permissions[r.IntN(len(versions[j+1].Permissions))]
	for v := range versions[:j+1] {
		versions[v].Developer = old
		versions[v].Permissions = slices.DeleteFunc(slices.Clone(versions[v].Permissions), func(s string) bool { return s == perm })
	}
	sale := versions[j]
	sale.CrawledAt = versions[j].CrawledAt.Add(24 * time.Hour)
	if sale.CrawledAt.Before(from) {
		sale.CrawledAt = from
	}
	sale.CrawledAt = sale.CrawledAt.Truncate(time.Second)
	sale.Version += ".1"
	sale.Developer = versions[j+1].Developer
	widened := sale
	widened.CrawledAt = sale.CrawledAt.Add(lag)
	widened.Version += ".1"
	widened.Permissions = append(slices.Clone(sale.Permissions), perm)
	return slices.Insert(versions, j+1, sale, widened)
}
