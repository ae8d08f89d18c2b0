// Package replicatest builds replicas of synthetic listings for the tests
// and benchmarks of the packages that read replicas. Only tests import it.
package replicatest

import (
	"slices"
	"time"

	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/replica"
	"github.com/edge-stats/edge/views/viewstest"
)

// Synth returns a replica of n listings of viewstest.Synth, spread over
// the stores by shares (nil: evenly), with their history loaded and
// viewstest.Ref as the data's now.
func Synth(n int, shares []float64) *replica.Replica {
	b := replica.NewBuilder(n)
	for _, l := range viewstest.Synth(n, shares) {
		b.Add(&l)
	}
	return b.Build(Info())
}

// Info is the info of Synth's replicas: viewstest.Ref as the data's now,
// with history.
func Info() replica.Info {
	info := replica.NewInfo(time.Time{}, viewstest.Ref)
	info.HasHistory = true
	return info
}

// Twins is Synth(n, nil) with a twin set: the same extension in three
// stores with small differences, a decoy of the same name by another developer, and two equally good edge
// candidates for one chrome listing (which must link neither).
func Twins(n int) *replica.Replica {
	r := Synth(n, nil)
	ls := r.All()
	desc := "Dark Reader helps you read web pages at night. Open source and free forever."
	add := func(s views.Store, id, name, dev, d string) {
		l := views.Listing{Store: s, ID: id, Name: name, Developer: dev, Description: d, ReadAt: ls[0].ReadAt, FirstSeen: ls[0].FirstSeen}
		l.SetUsage(1000, true)
		ls = append(ls, l)
	}
	add(views.Chrome, "twin-chrome", "Dark Reader", "Alexander Shutau", desc)
	add(views.Edge, "twin-edge", "Dark Reader for Edge", "Alexander Shutau Inc.", desc+" Now on Edge.")
	add(views.Firefox, "twin-firefox", "Dark Reader", "alexander shutau", "Dark Reader helps you read web pages at night. Open source.")
	add(views.Chrome, "decoy", "Dark Reader", "Someone Else", "Dark Reader helps you block annoying ads. Works offline.")
	add(views.Chrome, "tie-chrome", "Quick Notes", "Acme", "Quick Notes keeps your notes.")
	add(views.Edge, "tie-edge-1", "Quick Notes", "Acme", "Quick Notes keeps your notes.")
	add(views.Edge, "tie-edge-2", "Quick Notes", "Acme", "Quick Notes keeps your notes.")
	return replica.New(ls, r.Info())
}

// Refreshed returns the state after base that a refresh gives when it
// read a new crawl of one listing in every (288: a five-minute refresh
// of a day's crawl): those listings' users more, their newest reading an
// hour later and their history's time five minutes on; its generation
// is base's plus one. The fleet's benchmarks send it as a delta.
func Refreshed(base *replica.Replica, every int) *replica.Replica {
	ls := slices.Clone(base.All())
	for i := 0; i < len(ls); i += every {
		l := &ls[i]
		u, _ := l.Usage()
		l.SetUsage(u+int64(i%97)+1, true)
		l.ReadAt += 3600
		l.Hist.SetComputedAt(viewstest.Ref.Add(5 * time.Minute))
	}
	info := base.Info()
	info.Generation++
	return replica.New(ls, info)
}
