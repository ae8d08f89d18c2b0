// Command links measures the links across stores at scale: it generates
// a dataset in memory (the seeder's, with its twins), builds every figure
// and prints how long each phase of the build took, how many listings
// are linked, and the precision and recall against the seeder's twins.
//
//	go run ./bench/links --listings 1000000
package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/memload"
	"github.com/edge-stats/edge/analytics/seed"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

func main() {
	n := flag.Int("listings", 1_000_000, "listings to generate")
	shares := flag.String("shares", "", "spread over the stores: empty (the test spread) or real")
	flag.Parse()
	o := seed.Options{Seed: 11, Listings: *n, Days: 2, End: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Shares: seed.Shares(*shares)}
	start := time.Now()
	rows := seed.Generate(o)
	r := memload.New(rows.Listings, rows.Snapshots).Replica(1, time.Now())
	rows = nil
	fmt.Printf("generated %d listings in %s\n", r.Len(), time.Since(start).Round(time.Millisecond))
	f := figures.Build(r, 0)
	for _, p := range f.BuildPhases() {
		fmt.Printf("  %-22s %s\n", p.Name, p.Took.Round(time.Millisecond))
	}
	truth := map[[2]analytics.ListingKey]bool{}
	for _, tw := range seed.Twins(o) {
		a, b := r.Lookup(tw.A.Store, tw.A.ID), r.Lookup(tw.B.Store, tw.B.ID)
		if a != nil && b != nil && a.Crawled() && b.Crawled() {
			truth[[2]analytics.ListingKey{tw.A, tw.B}] = true
		}
	}
	linked, right, chromePairs := 0, 0, 0
	for i := range r.All() {
		l := &r.All()[i]
		links := f.Links(l)
		if len(links) > 0 {
			linked++
		}
		if l.Store != views.Chrome {
			continue
		}
		for _, k := range links {
			o := f.Replica().At(k.Index)
			chromePairs++
			if truth[[2]analytics.ListingKey{{Store: l.Store, ID: l.ID}, {Store: o.Store, ID: o.ID}}] {
				right++
			}
		}
	}
	fmt.Printf("%d listings linked; chrome pairs: %d linked, %d of them twins, of %d twins read: precision %.3f, recall %.3f\n",
		linked, chromePairs, right, len(truth), float64(right)/float64(max(chromePairs, 1)), float64(right)/float64(max(len(truth), 1)))
}
