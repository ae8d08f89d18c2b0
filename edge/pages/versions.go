package pages

import (
	"strings"
	"time"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/replica"
)

// maxVersions bounds a listing page's version history: the newest 50
// versions of its change window (its changes page has every change).
const maxVersions = 50

// versionHistory is every version of the listing seen in r's change
// window, newest first: when it was first read, the version before, and
// what else changed in the same crawl (its permissions, developer, ...),
// in words; the version the listing was first seen with closes the list
// when the window reaches back to it.
func versionHistory(r *replica.Replica, store views.Store, id string) []render.VersionRow {
	log := r.Changes()
	var out []render.VersionRow
	var same []string // what else changed at the crawl of at
	var at int64
	flush := func(row *render.VersionRow) {
		if row != nil {
			row.Also = strings.Join(same, "; ")
		}
	}
	var last *render.VersionRow
	for before := (changes.Pos{}); len(out) < maxVersions; {
		cs, more := log.Listing(store, id, before, 64)
		for i := range cs {
			c := cs[i]
			if c.At != at {
				flush(last)
				last, same, at = nil, nil, c.At
			}
			switch {
			case c.Kind == changes.Version && len(out) < maxVersions:
				out = append(out, render.VersionRow{Day: time.Unix(c.At, 0).UTC().Format(time.DateOnly), Version: c.After, Before: c.Before})
				last = &out[len(out)-1]
			case c.Kind != changes.Takeover:
				same = append(same, changeWords(c))
			}
		}
		if !more || len(cs) == 0 {
			break
		}
		before = changes.PosOf(cs[len(cs)-1])
	}
	flush(last)
	return out
}

// changeWords says a change beside a new version: "new developer: B",
// "added tabs".
func changeWords(c *changes.Change) string {
	label := kindLabels[c.Kind.String()]
	switch {
	case len(c.Added()) > 0 || len(c.Removed()) > 0:
		var parts []string
		if a := c.Added(); len(a) > 0 {
			parts = append(parts, "added "+strings.Join(a, ", "))
		}
		if rm := c.Removed(); len(rm) > 0 {
			parts = append(parts, "removed "+strings.Join(rm, ", "))
		}
		return label + ": " + strings.Join(parts, ", ")
	case c.After != "" && c.Kind != changes.Delisted && c.Kind != changes.Relisted:
		return label + ": " + c.After
	}
	return label
}
