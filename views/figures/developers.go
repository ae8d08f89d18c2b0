package figures

import (
	"cmp"
	"slices"
	"strings"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// DeveloperScan bounds how many of a store's changes of developer and
// takeovers (the newest first) a developer's read looks through for the
// listings it took over or gave up, and so which former developers have
// a page (FormerDeveloper).
const DeveloperScan = 20000

// formerDevelopers returns, for each store, the developers that a
// listing left among the store's newest DeveloperScan changes of
// developer: a developer that gave up every listing still has them to
// show.
func (f *Figures) formerDevelopers() [views.NumStores]map[string]struct{} {
	var out [views.NumStores]map[string]struct{}
	log := f.replica.Changes()
	for _, s := range views.Stores {
		out[s] = map[string]struct{}{}
		if log == nil {
			continue
		}
		filter := changes.Filter{Stores: []views.Store{s}, Kinds: []changes.Kind{changes.Developer, changes.Takeover}}
		pos := changes.Pos{}
		for seen := 0; seen < DeveloperScan; {
			cs, more := log.Before(&filter, pos, 1000)
			for _, c := range cs {
				if c.Kind == changes.Developer && c.Before != "" {
					out[s][c.Before] = struct{}{}
				}
			}
			seen += len(cs)
			if !more || len(cs) == 0 {
				break
			}
			pos = changes.PosOf(cs[len(cs)-1])
		}
	}
	return out
}

// FormerDeveloper reports whether a listing of store s left developer
// name among the store's newest DeveloperScan changes of developer.
func (f *Figures) FormerDeveloper(s views.Store, name string) bool {
	_, ok := f.former[s][name]
	return ok
}

// developerIndex returns the replica's listings of each store sorted by
// developer (then by index, the replica's id order), as indexes into the
// replica: one int32 a listing, so that a developer's listings are a
// binary search away (Developer).
func (f *Figures) developerIndex() []int32 {
	r := f.replica
	idx := make([]int32, r.Len())
	for i := range idx {
		idx[i] = int32(i)
	}
	for _, s := range views.Stores {
		lo, hi := r.StoreRange(s)
		slices.SortFunc(idx[lo:hi], func(a, b int32) int {
			return cmp.Or(strings.Compare(r.At(a).Developer, r.At(b).Developer), cmp.Compare(a, b))
		})
	}
	return idx
}

// Developer returns the listings of store s whose developer is name
// (exactly, as the store writes it), live or not, in id order; none for
// an empty name.
func (f *Figures) Developer(s views.Store, name string) []*views.Listing {
	if name == "" || f.developers == nil {
		return nil
	}
	r := f.replica
	lo, hi := r.StoreRange(s)
	part := f.developers[lo:hi]
	i, _ := slices.BinarySearchFunc(part, name, func(x int32, n string) int { return strings.Compare(r.At(x).Developer, n) })
	var out []*views.Listing
	for ; i < len(part) && r.At(part[i]).Developer == name; i++ {
		out = append(out, r.At(part[i]))
	}
	return out
}
