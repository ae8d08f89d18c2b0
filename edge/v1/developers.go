package v1

import (
	"cmp"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"unicode/utf8"

	"github.com/gofiber/fiber/v2"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/edge/read"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
	"github.com/edge-stats/edge/views/figures"
	"github.com/edge-stats/edge/views/served"
)

// developerMaxName bounds a developer's name in an address, in
// characters: no store's developer name is longer.
const developerMaxName = 200

// developerMaxListings is how many of a developer's listings its JSON
// and page hold as documents (Total says how many there are; the files
// hold up to ListFileRows): one store account can publish thousands of
// apps, and a read's answer is bounded whatever the developer.
const developerMaxListings = 200

// DeveloperParams are a developer's parameters as read: the store and
// the developer's name as the store writes it.
type DeveloperParams struct {
	Store views.Store
	Name  string
}

// Developer is a developer's listings in one store: the documents of the
// first developerMaxListings (live ones first, largest first, then the
// delisted), how many there are in all (Total), how many are live and
// their total size (of every listing, not only those shown), the listings of other stores linked to
// them (the same extension elsewhere, by the links' rule), and the
// changes of developer that brought a listing to this developer or took
// one away (with the takeovers that followed), newest first.
type Developer struct {
	Store       string             `json:"store"`
	Developer   string             `json:"developer"`
	Total       int                `json:"total"`
	Live        int                `json:"live"`
	TotalSize   int64              `json:"totalSize"`
	SizeMeasure string             `json:"sizeMeasure"`
	Listings    []document.Listing `json:"listings"`
	Elsewhere   []DeveloperLink    `json:"elsewhere"`
	Ownership   []document.Event   `json:"ownership"`

	Rows    []*views.Listing `json:"-"` // the listings, in the documents' order, up to the codec's rows
	Figures *figures.Figures `json:"-"`
	Lookup  document.Lookup  `json:"-"` // the replica they are read from
}

// DeveloperLink is a listing of another store linked to one of the
// developer's: the other listing, its developer there, and the id of
// the developer's listing it is linked to.
type DeveloperLink struct {
	Store      string  `json:"store"`
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Developer  string  `json:"developer"`
	Of         string  `json:"of"`
	Confidence float64 `json:"confidence"`
}

// DeveloperRead is the read of a developer's listings in a store (GET
// /api/v1/developers/{store}/{developer}, the developer's page and its
// files).
func DeveloperRead() *read.Read[DeveloperParams, Developer] { return developerRead }

// A developer's read is not Cheap: it looks through up to figures.DeveloperScan
// changes, so a flood of developers' misses waits its turn (the miss gate).
var developerRead = &read.Read[DeveloperParams, Developer]{
	Route:    "/api/v1/developers/:store/:developer",
	NotReady: "Developers are",
	Page:     answer.SamePage,
	Parse:    parseDeveloper,
	Key: func(k answer.Key, p *DeveloperParams) answer.Key {
		return k.Int("s", int64(p.Store)).Str("dev", p.Name)
	},
	Run: runDeveloper,
}

// parseDeveloper reads the store and the developer's name (percent-
// decoded): a 404 for a store or a developer with no listing in it and
// none that left it (FormerDeveloper), a 400 for a name no store writes.
func parseDeveloper(c *fiber.Ctx, st *served.State, _ read.Needs) (DeveloperParams, error) {
	var p DeveloperParams
	var err error
	if p.Store, err = StoreParam(c); err != nil {
		return p, err
	}
	name, err := url.PathUnescape(c.Params("developer"))
	if err != nil || name == "" || !utf8.ValidString(name) || utf8.RuneCountInString(name) > developerMaxName {
		return p, problem.Newf(http.StatusBadRequest, "developer: %.40q is not a developer's name: send the name as the store writes it, percent-encoded, 1 to %d characters.", c.Params("developer"), developerMaxName).
			ForReaders("This address names no developer: a developer's page is reached from one of its listings.")
	}
	if len(st.Figures.Developer(p.Store, name)) == 0 && !st.Figures.FormerDeveloper(p.Store, name) {
		return p, problem.Newf(http.StatusNotFound, "No listing of the %s store has the developer %.80q (names are matched exactly, case included).", p.Store, name).
			ForReaders(fmt.Sprintf("No listing of the %s store is by %.80q.", p.Store, name))
	}
	p.Name = name
	return p, nil
}

// runDeveloper gathers developer p.Name's listings in p.Store, their
// links elsewhere and the changes of developer in and out.
func runDeveloper(_ *fiber.Ctx, st *served.State, p *DeveloperParams, n read.Needs) (*Developer, error) {
	f := st.Figures
	ls := slices.Clone(f.Developer(p.Store, p.Name))
	slices.SortStableFunc(ls, func(a, b *views.Listing) int {
		if a.Live() != b.Live() {
			if a.Live() {
				return -1
			}
			return 1
		}
		sa, oka := a.Size()
		sb, okb := b.Size()
		if oka != okb {
			if oka {
				return -1
			}
			return 1
		}
		return cmp.Compare(sb, sa)
	})
	limit := developerMaxListings
	if n.Rows > 0 {
		limit = n.Rows
	}
	out := &Developer{Store: p.Store.String(), Developer: p.Name, Total: len(ls), SizeMeasure: p.Store.SizeMeasure(),
		Listings: []document.Listing{}, Elsewhere: []DeveloperLink{}, Ownership: []document.Event{},
		Rows: ls[:min(len(ls), limit)], Figures: f, Lookup: st.Replica}
	for _, l := range ls {
		if l.Live() {
			out.Live++
			if s, ok := l.Size(); ok {
				out.TotalSize += s
			}
		}
	}
	for _, l := range ls[:min(len(ls), developerMaxListings)] {
		d := document.NewListing(l, f)
		out.Listings = append(out.Listings, d)
		for _, a := range d.AlsoIn {
			o := DeveloperLink{Store: a.Store, ID: a.ID, Of: l.ID, Confidence: a.Confidence}
			if s, err := views.ParseStore(a.Store); err == nil {
				if other := st.Replica.Lookup(s, a.ID); other != nil {
					o.Name, o.Developer = other.Name, other.Developer
				}
			}
			out.Elsewhere = append(out.Elsewhere, o)
		}
	}
	if log := st.Replica.Changes(); log != nil {
		out.Ownership = ownership(log, st.Replica, p.Store, p.Name)
	}
	return out, nil
}

// ownership returns the store's changes of developer to or from name,
// and the takeovers by name, newest first, among the store's newest
// figures.DeveloperScan changes of developer and takeovers.
func ownership(log *changes.Log, r document.Lookup, s views.Store, name string) []document.Event {
	out := []document.Event{}
	f := changes.Filter{Stores: []views.Store{s}, Kinds: []changes.Kind{changes.Developer, changes.Takeover}}
	pos := changes.Pos{}
	for seen := 0; seen < figures.DeveloperScan; {
		cs, more := log.Before(&f, pos, 1000)
		for _, c := range cs {
			if c.Before == name || c.After == name {
				out = append(out, document.NewEvent(c, r))
			}
		}
		seen += len(cs)
		if !more || len(cs) == 0 {
			break
		}
		pos = changes.PosOf(cs[len(cs)-1])
	}
	return out
}

// developerJSON writes a developer's listings.
var developerJSON = jsonOf(func(v *Developer) any { return v })

// DeveloperFiles are a developer's listings as CSV and NDJSON: one row a
// listing, as the listings' files write them, up to ListFileRows.
func DeveloperFiles() []read.Codec[Developer] {
	name := func(v *Developer) string { return "developer-" + fileSafe(v.Developer) + "-" + v.Store }
	cs := files(read.Needs{Rows: ListFileRows}, name, listingCSVHeader, nil,
		func(v *Developer, add func(any)) {
			var d document.Listing
			for _, l := range v.Rows {
				d.Fill(l, v.Figures)
				add(&d)
			}
		})
	cs[0].Encode = listingRowsCSV(name, func(v *Developer) *document.ListingPage {
		return &document.ListingPage{Listings: v.Rows, Figures: v.Figures}
	})
	return cs
}
