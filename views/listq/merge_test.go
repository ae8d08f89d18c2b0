package listq

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/links"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/replica/replicatest"
	"github.com/edge-stats/edge/views/viewstest"
)

// refreshed returns r with what a refresh might change: a few listings'
// every sort key (sizes, ratings, names, categories, dates, whether they
// are crawled or delisted), a few removed and a few added, some of them
// never crawled. Names and sizes repeat, so that ties are many.
func refreshed(rng *rand.Rand, r *replica.Replica, step int, nul bool) *replica.Replica {
	next := slices.Clone(r.All())
	names := []string{"Dark Reader", "Dark", "Dark Reader ", "a", "Ad Block", "Ad Block Plus", "Zebra", "Ölfarbe", "", "Dark Reader Dark Reader Dark"}
	if nul {
		names = append(names, "Dark\x00", "Dark\x00Reader", "a\x00\x00")
	}
	change := func(l *views.Listing) {
		switch rng.IntN(10) {
		case 0:
			l.SetUsage(int64(rng.IntN(50))*1000, rng.IntN(8) != 0)
		case 1:
			l.Name = names[rng.IntN(len(names))]
		case 2:
			l.Category = fmt.Sprintf("cat-%d", rng.IntN(6))
		case 3:
			l.SetRating(float64(rng.IntN(50))/10, rng.IntN(5) != 0)
			l.SetRatingCount(int64(rng.IntN(200)), true)
		case 4:
			l.Updated = views.Day(rng.IntN(100) + 19000)
			l.FirstSeen = int64(rng.IntN(1000)) * 86400
		case 5:
			l.ReadAt = 0 // no longer crawled (a reset)
		case 6:
			l.Delisted = viewstest.Ref.Unix() - int64(rng.IntN(3))*86400
		case 7:
			l.AccessLevel = uint8(rng.IntN(4))
			l.Created = views.Day(rng.IntN(50) + 18000)
		case 8:
			l.Hist.SetComputedAt(viewstest.Ref.Add(time.Duration(step+1) * time.Minute))
			l.SetUsage(int64(rng.IntN(1e6)), true)
		default:
			l.ReadAt = viewstest.Ref.Unix() - int64(rng.IntN(3600))
			l.SetUsage(int64(rng.IntN(20))*1000, true)
		}
	}
	for range rng.IntN(len(next)/20 + 2) {
		change(&next[rng.IntN(len(next))])
	}
	for range rng.IntN(5) {
		k := rng.IntN(len(next))
		next = slices.Delete(next, k, k+1)
	}
	for k := range rng.IntN(6) {
		l := viewstest.Synth(1, nil)[0]
		l.ID = fmt.Sprintf("new-%d-%d", step, k)
		l.Store = views.Stores[rng.IntN(len(views.Stores))]
		change(&l)
		next = append(next, l)
	}
	info := r.Info()
	info.ListingsMark = info.ListingsMark.Add(5 * time.Minute)
	return replica.New(next, info)
}

// reloaded returns r as a full reload reads it again: every listing a
// copy of its own (no string, list or sparkline shared with r's), its
// figures the same.
func reloaded(r *replica.Replica) *replica.Replica {
	ls := slices.Clone(r.All())
	for i := range ls {
		l := &ls[i]
		for _, s := range []*string{&l.ID, &l.Slug, &l.Name, &l.Developer, &l.Category, &l.Description, &l.Icon, &l.Version} {
			*s = strings.Clone(*s)
		}
		for _, list := range []*[]string{&l.Permissions, &l.HostAccess, &l.Topics} {
			c := slices.Clone(*list)
			for k := range c {
				c[k] = strings.Clone(c[k])
			}
			*list = c
		}
		sp := l.Hist.SparklineBytes()
		*sp = bytes.Clone(*sp)
	}
	return replica.New(ls, r.Info())
}

// throughDelta returns next as a follower holding base gets it: a delta
// written by its leader and applied (replica.ReadDelta).
func throughDelta(t *testing.T, base, next *replica.Replica) (*replica.Replica, replica.Applied) {
	t.Helper()
	var buf bytes.Buffer
	bd, nd := replica.DigestOf(base, 1), replica.DigestOf(next, 1)
	if _, err := replica.WriteDelta(&buf, base, bd, next, 1, nd); err != nil {
		t.Fatal(err)
	}
	r, _, _, err := replica.ReadDelta(&buf, base, bd, replica.ReadOptions{Generation: next.Info().Generation})
	if err != nil {
		t.Fatal(err)
	}
	a, ok := r.AppliedTo(base)
	if !ok {
		t.Fatal("the replica read from a delta does not say how")
	}
	return r, a
}

// throughMerge returns next as a leader's refresh makes it from base:
// replica.Merge of the listings next changed or added (what next
// removed, a refresh keeps), with how the merge made it.
func throughMerge(t *testing.T, base, next *replica.Replica) (*replica.Replica, replica.Applied) {
	t.Helper()
	b := replica.NewBuilder(0)
	for i := range int32(next.Len()) {
		l := next.At(i)
		if old := base.Lookup(l.Store, l.ID); old == nil || !reflect.DeepEqual(*old, *l) {
			b.Add(l)
		}
	}
	r := replica.Merge(base, b, next.Info())
	a, ok := r.AppliedTo(base)
	if !ok {
		t.Fatal("the merged replica does not say how it was made")
	}
	return r, a
}

// TestBuildFromIsBuild checks the property BuildFrom rests on: after a
// chain of deltas, each engine merged from the one before has every sort
// order Build gives the same replica, listing for listing. Every other
// step is two deltas taken in one ask, the engine merged once from the
// one before both (replica.Applied composed). Every third step is a
// leader's refresh (replica.Merge), whose figures are built from its
// figures before as a follower's are. Every fourth is a full reload:
// every listing read again, as copies of its own, with what the step
// changed.
func TestBuildFromIsBuild(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 20))
			var shares []float64
			if seed%2 == 0 {
				shares = viewstest.RealShares
			}
			have := replicatest.Synth(600+int(seed)*80, shares)
			e := build(have)
			for step := range 6 {
				through := throughDelta
				if step%3 == 2 {
					through = throughMerge
				}
				want := refreshed(rng, have, step, seed%3 == 2)
				if step%4 == 3 {
					want = reloaded(want)
				}
				next, a := through(t, have, want)
				if step%2 == 1 {
					next, _ = throughDelta(t, next, refreshed(rng, next, 10+step, seed%3 == 2))
					var ok bool
					if a, ok = next.AppliedTo(have); !ok {
						t.Fatalf("step %d: the second delta's replica does not say how it was made from the first's base", step)
					}
				}
				ranks, topics := standIns(next)
				got := BuildFrom(e, next, ranks, links.Build(next), topics, a)
				what := fmt.Sprintf("step %d (%d added, %d dropped)", step, len(a.Added), len(a.Dropped))
				if !got.Merged() {
					t.Fatalf("%s: sorted whole, not merged", what)
				}
				sameOrders(t, what, got, build(next))
				have, e = next, got
			}
		})
	}
}

// sameOrders fails t unless got's sort orders are want's.
func sameOrders(t *testing.T, what string, got, want *Engine) {
	t.Helper()
	if got.nulNames != want.nulNames && !got.nulNames {
		t.Fatalf("%s: names with a NUL byte not seen", what)
	}
	for i := range numSorts {
		if got.orders.seg[i] != want.orders.seg[i] || got.orders.present[i] != want.orders.present[i] {
			t.Fatalf("%s: sort %s: segments %v present %v, want %v %v", what, i, got.orders.seg[i], got.orders.present[i], want.orders.seg[i], want.orders.present[i])
		}
		if k := slices.Compare(got.orders.order[i], want.orders.order[i]); k != 0 {
			for p := range want.orders.order[i] {
				if got.orders.order[i][p] != want.orders.order[i][p] {
					g, w := got.ls[got.orders.order[i][p]], want.ls[want.orders.order[i][p]]
					t.Fatalf("%s: sort %s differs at %d: %d %q, want %d %q", what, i, p, got.orders.order[i][p], g.Name, want.orders.order[i][p], w.Name)
				}
			}
		}
	}
}

// A delta that does not fit the engine it is given (another base) is
// not merged: the orders are sorted whole.
func TestBuildFromAnotherBaseSortsWhole(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 20))
	base := replicatest.Synth(800, nil)
	next, a := throughDelta(t, base, refreshed(rng, base, 0, false))
	ranks, topics := standIns(next)
	other := build(replicatest.Synth(500, nil))
	got := BuildFrom(other, next, ranks, links.Build(next), topics, a)
	if got.Merged() {
		t.Fatal("merged with the engine of another replica")
	}
	sameOrders(t, "another base", got, build(next))
	a.Dropped = append(a.Dropped, a.Dropped...) // out of order
	got = BuildFrom(build(base), next, ranks, links.Build(next), topics, a)
	if got.Merged() {
		t.Fatal("merged with indexes out of order")
	}
	sameOrders(t, "indexes out of order", got, build(next))
}
