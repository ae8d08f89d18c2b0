// Package links finds the listings of chrome, edge and firefox that are
// the same extension published in several stores.
package links

import (
	"math"
	"slices"
	"strings"
	"unicode"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
)

// Link is a listing of another store judged to be the same extension,
// with the confidence of the judgement (0 to 1).
type Link struct {
	Index      int32 // in the replica
	Confidence float64
}

// The linking rule. Listings of chrome, edge and firefox are candidates
// when their names are the same once normalised (case, punctuation and
// the words that name a browser or say "extension" left out; at least
// three characters left). A pair scores NameWeight, plus DeveloperWeight
// when the developers are the same once normalised (case, punctuation and
// company suffixes such as Inc. or GmbH left out), plus DescriptionWeight
// times the Jaccard similarity of their descriptions' words. A pair is
// linked when it scores LinkThreshold or more and is the best of its
// listing's candidates in the other store by a margin of LinkMargin (two
// equally good candidates link neither). The score is the link's
// confidence. The stores publish no homepage to compare.
const (
	NameWeight        = 0.4
	DeveloperWeight   = 0.3
	DescriptionWeight = 0.3
	LinkThreshold     = 0.85
	LinkMargin        = 0.05
)

// linkStores are the stores whose listings are linked: the extension
// stores.
var linkStores = []views.Store{views.Chrome, views.Edge, views.Firefox}

// browserWords are left out of names before they are compared.
var browserWords = map[string]bool{"for": true, "chrome": true, "google": true, "firefox": true, "mozilla": true, "edge": true,
	"microsoft": true, "browser": true, "extension": true, "extensions": true, "addon": true, "add": true, "on": true,
	"ons": true, "plugin": true, "the": true}

// companyWords are left out of developers' names before they are
// compared.
var companyWords = map[string]bool{"inc": true, "llc": true, "ltd": true, "limited": true, "gmbh": true, "co": true,
	"corp": true, "corporation": true, "company": true, "sa": true, "sas": true, "bv": true, "ag": true, "pty": true}

// words returns s's words: runs of letters and digits, lower-cased,
// without those drop names.
func words(s string, drop map[string]bool) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	out := f[:0]
	for _, w := range f {
		if !drop[w] {
			out = append(out, w)
		}
	}
	return out
}

// NormalName returns a listing name as linking compares it ("" when too
// little is left to compare).
func NormalName(name string) string {
	n := strings.Join(words(name, browserWords), " ")
	if len(n) < 3 {
		return ""
	}
	return n
}

// NormalDeveloper returns a developer name as linking compares it.
func NormalDeveloper(dev string) string { return strings.Join(words(dev, companyWords), " ") }

// jaccard returns the Jaccard similarity of two sorted sets of word ids.
func jaccard(a, b []uint32) float64 {
	if len(a) == 0 && len(b) == 0 {
		return 0
	}
	inter := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// linkFeatures are what linking compares of a listing.
type linkFeatures struct {
	dev  string
	desc []uint32 // the description's distinct words, as sorted ids
}

// featurer makes listings' link features, numbering words as it meets them.
type featurer struct{ ids map[string]uint32 }

func (fz *featurer) features(l *views.Listing) linkFeatures {
	if fz.ids == nil {
		fz.ids = map[string]uint32{}
	}
	var set []uint32
	for _, w := range words(l.Description, nil) {
		id, ok := fz.ids[w]
		if !ok {
			id = uint32(len(fz.ids))
			fz.ids[w] = id
		}
		set = append(set, id)
	}
	slices.Sort(set)
	return linkFeatures{dev: NormalDeveloper(l.Developer), desc: slices.Compact(set)}
}

// LinkScore returns the score of two listings by the linking rule; 0 when
// their names differ.
func LinkScore(a, b *views.Listing) float64 {
	na := NormalName(a.Name)
	if na == "" || na != NormalName(b.Name) {
		return 0
	}
	var fz featurer
	return score(fz.features(a), fz.features(b))
}

func score(a, b linkFeatures) float64 {
	s := NameWeight
	if a.dev != "" && a.dev == b.dev {
		s += DeveloperWeight
	}
	s += DescriptionWeight * jaccard(a.desc, b.desc)
	return math.Round(s*100) / 100
}

// Build links the listings of the extension stores that are the
// same extension (see LinkThreshold): within each group of listings of
// one normal name, each pair of stores' listings is scored once, and a
// pair is linked when each is the other's clear best.
func Build(r *replica.Replica) *Set {
	f := &Set{}
	ls := r.All()
	// Without the same developer a pair scores at most NameWeight +
	// DescriptionWeight, under LinkThreshold, and no further than the
	// margin from a pair that links: candidates are grouped by name and
	// developer, which finds the same links as by name alone and keeps
	// the groups small (a common name, such as "Dark Mode", has hundreds
	// of listings, whose pairs grouped by name alone are most of the
	// work).
	byName := map[string][]int32{}
	for _, s := range linkStores {
		lo, hi := r.StoreRange(s)
		for i := lo; i < hi; i++ {
			if !ls[i].Crawled() {
				continue
			}
			n, d := NormalName(ls[i].Name), NormalDeveloper(ls[i].Developer)
			if n != "" && d != "" {
				key := n + "\x00" + d
				byName[key] = append(byName[key], int32(i))
			}
		}
	}
	f.links = map[int32][]Link{}
	var fz featurer
	var scores []float64
	for _, group := range byName {
		var per [views.NumStores][]int32
		for _, i := range group {
			per[ls[i].Store] = append(per[ls[i].Store], i)
		}
		feats := map[int32]linkFeatures{}
		for si, s1 := range linkStores {
			for _, s2 := range linkStores[si+1:] {
				as, bs := per[s1], per[s2]
				if len(as) == 0 || len(bs) == 0 {
					continue
				}
				for _, i := range group {
					if _, ok := feats[i]; !ok {
						feats[i] = fz.features(&ls[i])
					}
				}
				scores = slices.Grow(scores[:0], len(as)*len(bs))[:len(as)*len(bs)]
				for x, a := range as {
					for y, b := range bs {
						scores[x*len(bs)+y] = score(feats[a], feats[b])
					}
				}
				// clearBest returns the index of the best of n scores at
				// (k·step) from at, when it is over the threshold and
				// ahead of the second by the margin; -1 otherwise.
				clearBest := func(at, step, n int) int {
					top, second, best := 0.0, 0.0, -1
					for k := range n {
						sc := scores[at+k*step]
						if sc > top {
							top, second, best = sc, top, k
						} else if sc > second {
							second = sc
						}
					}
					if top < LinkThreshold || top-second < LinkMargin {
						return -1
					}
					return best
				}
				for x, a := range as {
					y := clearBest(x*len(bs), 1, len(bs))
					if y < 0 || clearBest(y, len(bs), len(as)) != x {
						continue
					}
					sc := scores[x*len(bs)+y]
					f.links[a] = append(f.links[a], Link{bs[y], sc})
					f.links[bs[y]] = append(f.links[bs[y]], Link{a, sc})
				}
			}
		}
	}
	f.linked = f.linked[:0]
	for i := range f.links {
		f.linked = append(f.linked, i)
		slices.SortFunc(f.links[i], func(a, b Link) int { return int(ls[a.Index].Store) - int(ls[b.Index].Store) })
	}
	slices.Sort(f.linked)
	return f
}

// Set is the links of one replica's listings.
type Set struct {
	links  map[int32][]Link
	linked []int32 // the listings that have links, ascending
}

// Of returns the listings of other stores judged the same extension as
// the replica's listing i, in store order.
func (s *Set) Of(i int32) []Link { return s.links[i] }

// Linked returns the listings that have links, ascending.
func (s *Set) Linked() []int32 { return s.linked }

// To reports whether the replica's listing i is linked to a listing of
// store st; ls are the replica's listings.
func (s *Set) To(ls []views.Listing, i int, st views.Store) bool {
	for _, l := range s.links[int32(i)] {
		if ls[l.Index].Store == st {
			return true
		}
	}
	return false
}
