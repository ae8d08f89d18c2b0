package figures

import (
	"cmp"
	"slices"
	"strings"

	"github.com/edge-stats/edge/views"
)

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
