// Package changes is what changed in listings' metadata between the
// versions the crawler read: a new version, permissions or host access
// added or removed, a new developer (an ownership change), name,
// category, manifest version or access level, featured or not, delisted
// and back; and, derived from those, a takeover (a new developer, then a
// widening of what the listing may do). Diff compares two versions of one listing; a Log keeps every
// change of a retention window in feed order (oldest first), with each
// listing's own changes one binary search away. It is pure: the views job
// reads the versions (package analytics), the API serves the Log.
package changes

import (
	"slices"
	"strconv"
	"time"

	"github.com/edge-stats/edge/views"
)

// Kind is what changed.
type Kind uint8

// The kinds of change, in the order a listing's changes of one crawl are
// listed.
const (
	Version Kind = iota + 1
	Permissions
	HostAccess
	ManifestVersion
	AccessLevel
	Developer
	Name
	Category
	Featured
	Delisted
	Relisted
	// Takeover is derived, not read: a change of developer followed by a
	// widening of what the listing may do (takeovers, in Log).
	Takeover
	numKinds
)

var kindNames = [numKinds]string{"", "version", "permissions", "hostAccess", "manifestVersion", "accessLevel",
	"developer", "name", "category", "featured", "delisted", "relisted", "takeover"}

// String returns the kind's name in the API ("hostAccess").
func (k Kind) String() string {
	if k == 0 || k >= numKinds {
		return ""
	}
	return kindNames[k]
}

// ParseKind returns the kind named s, as String spells it.
func ParseKind(s string) (Kind, bool) {
	for k := Version; k < numKinds; k++ {
		if kindNames[k] == s {
			return k, true
		}
	}
	return 0, false
}

// Kinds returns every kind, in order.
func Kinds() []Kind {
	ks := make([]Kind, 0, numKinds-1)
	for k := Version; k < numKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// Manifest reports whether the kind is a manifest's (permissions, host
// access, manifest version, access level): only the stores whose
// manifests the crawler reads (chrome, edge) have them.
func (k Kind) Manifest() bool {
	return k == Permissions || k == HostAccess || k == ManifestVersion || k == AccessLevel
}

// Change is one change of one listing, seen by the crawl at At.
type Change struct {
	At    int64 // unix seconds of the crawl that read the new version
	ID    string
	Store views.Store
	Kind  Kind
	// Widened is set on a HostAccess change that lets the listing reach
	// hosts it could not before (see Diff).
	Widened bool
	// Via is a Takeover's widening kind: the change of its crawl it joins
	// with the change of developer (Log.Joins).
	Via Kind
	// nAdded splits Set: Set[:nAdded] were added, the rest removed.
	nAdded uint16
	// Before and After are the values of a version, developer, name,
	// category, manifest version or access level (numbers in decimal),
	// featured ("true", "false"); a delisting's After and a relisting's
	// Before are the delisting's time (RFC 3339); a takeover's, the old
	// and the new developer.
	Before, After string
	// Set holds the added then the removed names of a Permissions or
	// HostAccess change, each part sorted; a Takeover's, the permissions
	// then the host patterns its crawl added.
	Set []string
}

// Added returns the permissions or host patterns the change added.
func (c *Change) Added() []string { return c.Set[:c.nAdded] }

// Removed returns the permissions or host patterns the change removed.
func (c *Change) Removed() []string { return c.Set[c.nAdded:] }

// Meta is what Diff compares of one metadata version of a listing.
type Meta struct {
	At              int64 // unix seconds of the crawl that read it
	Version         string
	Developer       string
	Name            string
	Category        string
	Featured        bool
	Delisted        int64 // unix seconds; 0 while live
	ManifestVersion uint8 // 0 when unknown
	AccessLevel     uint8 // 0 when unknown
	Permissions     []string
	HostAccess      []string
}

// MetaOf returns what Diff compares of l's newest version.
func MetaOf(l *views.Listing) Meta {
	return Meta{At: l.MetaAt, Version: l.Version, Developer: l.Developer, Name: l.Name, Category: l.Category,
		Featured: l.Featured, Delisted: l.Delisted, ManifestVersion: l.ManifestVersion, AccessLevel: l.AccessLevel,
		Permissions: l.Permissions, HostAccess: l.HostAccess}
}

// Read reports whether m is a version the crawler read, not only a
// listing it knows of (such a version has no name and no version).
func (m *Meta) Read() bool { return m.Name != "" || m.Version != "" || m.Developer != "" }

// Diff appends to dst the changes of listing (s, id) from prev to next,
// its next version, at next.At. Nothing changes from or to a version the
// crawler did not read (Meta.Read); a manifest version or access level of
// 0 is unknown, not a change; manifest kinds only on the stores that read
// manifests. A HostAccess change widens access when it adds a pattern and
// the listing had no pattern that reaches every host (views.HostReachesAll,
// as the listing query's host-access filter reads it) before:
// any new pattern reaches hosts the old ones did not.
func Diff(dst []Change, s views.Store, id string, prev, next *Meta) []Change {
	if !prev.Read() || !next.Read() {
		return dst
	}
	at := next.At
	scalar := func(k Kind, before, after string) {
		if before != after {
			dst = append(dst, Change{At: at, ID: id, Store: s, Kind: k, Before: before, After: after})
		}
	}
	scalar(Version, prev.Version, next.Version)
	if s.ReadsManifests() {
		if added, removed := setDiff(prev.Permissions, next.Permissions); len(added)+len(removed) > 0 {
			dst = append(dst, Change{At: at, ID: id, Store: s, Kind: Permissions, nAdded: uint16(len(added)), Set: append(added, removed...)})
		}
		if added, removed := setDiff(prev.HostAccess, next.HostAccess); len(added)+len(removed) > 0 {
			widened := len(added) > 0 && !slices.ContainsFunc(prev.HostAccess, views.HostReachesAll)
			dst = append(dst, Change{At: at, ID: id, Store: s, Kind: HostAccess, Widened: widened, nAdded: uint16(len(added)), Set: append(added, removed...)})
		}
		if prev.ManifestVersion != 0 && next.ManifestVersion != 0 {
			scalar(ManifestVersion, strconv.Itoa(int(prev.ManifestVersion)), strconv.Itoa(int(next.ManifestVersion)))
		}
		if prev.AccessLevel != 0 && next.AccessLevel != 0 {
			scalar(AccessLevel, strconv.Itoa(int(prev.AccessLevel)), strconv.Itoa(int(next.AccessLevel)))
		}
	}
	scalar(Developer, prev.Developer, next.Developer)
	scalar(Name, prev.Name, next.Name)
	scalar(Category, prev.Category, next.Category)
	if prev.Featured != next.Featured {
		scalar(Featured, strconv.FormatBool(prev.Featured), strconv.FormatBool(next.Featured))
	}
	switch {
	case prev.Delisted == 0 && next.Delisted != 0:
		dst = append(dst, Change{At: at, ID: id, Store: s, Kind: Delisted, After: rfc3339(next.Delisted)})
	case prev.Delisted != 0 && next.Delisted == 0:
		dst = append(dst, Change{At: at, ID: id, Store: s, Kind: Relisted, Before: rfc3339(prev.Delisted)})
	}
	return dst
}

func rfc3339(unix int64) string { return time.Unix(unix, 0).UTC().Format(time.RFC3339) }

// setDiff returns what next has that prev has not, and what prev had that
// next has not, each sorted and without repeats.
func setDiff(prev, next []string) (added, removed []string) {
	for _, x := range next {
		if !slices.Contains(prev, x) && !slices.Contains(added, x) {
			added = append(added, x)
		}
	}
	for _, x := range prev {
		if !slices.Contains(next, x) && !slices.Contains(removed, x) {
			removed = append(removed, x)
		}
	}
	slices.Sort(added)
	slices.Sort(removed)
	return added, removed
}
