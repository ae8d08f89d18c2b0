// Package viewstest makes listings for the tests and benchmarks of the
// views packages: a synthetic population with realistic shapes, built
// without I/O. Only tests import it.
package viewstest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"

	"github.com/edge-stats/edge/views"
)

// Ref is the data's "now" of Synth's listings.
var Ref = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// RealShares is each store's share of the five stores' listings (the
// seeder's --shares real: apple 44.6%, googleplay 49.3%, chrome 4.4%,
// firefox 0.93%, edge 0.71%), indexed by Store.
var RealShares = []float64{views.Chrome: 0.0445, views.Edge: 0.0071, views.Firefox: 0.0093, views.Apple: 0.4462, views.GooglePlay: 0.4929}

// Synth returns n listings with realistic shapes (power-law sizes,
// categories, topics, ratings, growth bases, a sparkline), spread over the
// stores by shares (indexed by Store; nil: evenly), in no order. Equal
// strings (categories, topics, permissions) share one copy, as a load's
// interner makes them.
func Synth(n int, shares []float64) []views.Listing {
	r := rand.New(rand.NewPCG(1, 2))
	ref := Ref
	strs := map[string]string{}
	intern := func(s string) string {
		if v, ok := strs[s]; ok {
			return v
		}
		strs[s] = s
		return s
	}
	lists := map[string][]string{}
	internList := func(ss ...string) []string {
		k := fmt.Sprint(ss)
		if v, ok := lists[k]; ok {
			return v
		}
		for i := range ss {
			ss[i] = intern(ss[i])
		}
		lists[k] = ss
		return ss
	}
	out := make([]views.Listing, 0, n)
	var spark []views.SparkPoint
	for i := range n {
		s := views.Store(r.IntN(views.NumStores))
		if shares != nil {
			x := r.Float64()
			for s = 0; int(s) < len(shares)-1 && x >= shares[s]; s++ {
				x -= shares[s]
			}
		}
		l := views.Listing{Store: s, ID: fmt.Sprintf("%032x", r.Uint64()^uint64(i)), Name: "Listing " + fmt.Sprint(i),
			Category:  intern(fmt.Sprintf("Category %d", int(math.Pow(r.Float64(), 2)*15))),
			FirstSeen: ref.Add(-time.Duration(r.IntN(400*24)) * time.Hour).Unix(),
			ReadAt:    ref.Add(-time.Duration(r.IntN(72)) * time.Hour).Unix(), Version: "1.2.3",
			Updated: views.DayOf(ref) - views.Day(r.IntN(2000))}
		if r.Float64() < 0.05 {
			l.Delisted = ref.Add(-time.Duration(r.IntN(100*24)) * time.Hour).Unix()
		}
		size := int64(3 / math.Pow(1-r.Float64(), 1/0.75))
		if s == views.Apple {
			l.SetRatingCount(size, true)
		} else {
			l.SetUsage(size, true)
			if r.Float64() < 0.8 {
				l.SetRatingCount(size/50, true)
			}
		}
		if r.Float64() < 0.8 {
			l.SetRating(1+4*r.Float64(), true)
		}
		l.Topics = internList(fmt.Sprintf("topic-%d", r.IntN(40)))
		if s.ReadsManifests() {
			l.Permissions = internList("storage", fmt.Sprintf("perm-%d", r.IntN(30)))
			l.ManifestVersion, l.AccessLevel = 3, uint8(1+r.IntN(4))
		}
		for _, w := range views.Windows {
			if r.Float64() < 0.9 {
				l.Hist.SetSizeBase(w, views.Base{Value: size * int64(80+r.IntN(40)) / 100, At: l.ReadAt - int64(w.Days())*86400})
			}
		}
		l.Hist.SetClimbBase(views.Base{Value: size * int64(80+r.IntN(40)) / 100, At: ref.Add(-8 * 24 * time.Hour).Unix()})
		spark = spark[:0]
		for d := 0; d < views.SparkDays; d += 1 + r.IntN(3) {
			spark = append(spark, views.SparkPoint{Day: views.DayOf(ref) - views.Day(views.SparkDays-d), Value: size + int64(d)})
		}
		l.Hist.SetSparkline(views.EncodeSparkline(spark))
		out = append(out, l)
	}
	return out
}
