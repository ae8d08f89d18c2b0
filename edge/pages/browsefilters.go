package pages

import (
	"net/url"
	"time"

	"github.com/edge-stats/edge/edge/pages/render"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// filterField is a field of the browser's "more filters": its parameter
// (the API's), its label, its input type, its choices for a select, and
// its bounds for a number.
type filterField struct {
	name, label, kind string
	options           []render.Option
	min, max, step    string
	list              string // the datalist it offers, for a text field
}

// anyOption is a select's first choice: the filter not set.
var anyOption = render.Option{Value: "", Label: "any"}

// filterFields are the browser's filters past store, category, topic and
// search, in the form's order: every filter of the listings' read.
var filterFields = []filterField{
	{name: "kind", label: "Type", kind: "select", options: []render.Option{anyOption, {Value: "extension", Label: "extension"}, {Value: "theme", Label: "theme"}, {Value: "app", Label: "app"}}},
	{name: "minSize", label: "Size from", kind: "number", min: "0"},
	{name: "maxSize", label: "Size to", kind: "number", min: "0"},
	{name: "minRating", label: "Rating from", kind: "number", min: "0", max: "5", step: "0.01"},
	{name: "maxRating", label: "Rating to", kind: "number", min: "0", max: "5", step: "0.01"},
	{name: "minRatingCount", label: "Ratings from", kind: "number", min: "0"},
	{name: "maxRatingCount", label: "Ratings to", kind: "number", min: "0"},
	{name: "permission", label: "Asks for the permission", kind: "text", list: "permissions"},
	{name: "hostAccess", label: "May read and change every site", kind: "checkbox", options: []render.Option{{Value: "all", Label: "yes"}}},
	{name: "minAccessLevel", label: "Access at least", kind: "select", options: []render.Option{anyOption,
		{Value: "1", Label: "1 minimal"}, {Value: "2", Label: "2 limited"}, {Value: "3", Label: "3 broad"}, {Value: "4", Label: "4 extensive"}}},
	{name: "manifestVersion", label: "Manifest version", kind: "select", options: []render.Option{anyOption, {Value: "2", Label: "2"}, {Value: "3", Label: "3"}}},
	{name: "featured", label: "Featured", kind: "select", options: []render.Option{anyOption, {Value: "true", Label: "featured"}, {Value: "false", Label: "not featured"}}},
	{name: "minVersion", label: "Version from", kind: "text"},
	{name: "maxVersion", label: "Version to", kind: "text"},
	{name: "updatedAfter", label: "Updated from", kind: "date"},
	{name: "updatedBefore", label: "Updated to", kind: "date"},
	{name: "firstSeenAfter", label: "First seen from", kind: "date"},
	{name: "firstSeenBefore", label: "First seen to", kind: "date"},
	{name: "includeDelisted", label: "Delisted listings too", kind: "checkbox", options: []render.Option{{Value: "true", Label: "yes"}}},
	{name: "delistedOnly", label: "Delisted listings only", kind: "checkbox", options: []render.Option{{Value: "true", Label: "yes"}}},
	{name: "delistedAfter", label: "Delisted from", kind: "date"},
	{name: "delistedBefore", label: "Delisted to", kind: "date"},
}

// chipLabels are the words a chip says of each filter of the query, by
// its parameter.
var chipLabels = func() map[string]string {
	m := map[string]string{"store": "store", "category": "category", "tag": "topic", "q": "matching", "alsoIn": "also in"}
	for _, f := range filterFields {
		m[f.name] = f.label
	}
	return m
}()

// chipOrder is the order of the chips: the form's.
var chipOrder = func() []string {
	names := []string{"q", "store", "category", "tag", "alsoIn"}
	for _, f := range filterFields {
		names = append(names, f.name)
	}
	return names
}()

// weekNote says which week the browser's 7-day growth covers (the 7 days
// up to each listing's newest reading, mostly the data's newest day),
// and the trending charts' (a fixed window that ends earlier, so that
// every listing's readings cover it), with their dates.
func weekNote(f *figures.Figures) string {
	if f == nil {
		return ""
	}
	newest := f.Replica().Info().ReadingsMark.UTC()
	note := "Growth, 7 days is each listing's change over the 7 days up to its newest reading (" + newest.AddDate(0, 0, -7).Format("2 Jan") + " to " + newest.Format("2 Jan 2006") + " for a listing read on the newest day)"
	if from, to, ok := f.Window(figures.ChartTrending); ok {
		note += "; the trending charts rank every listing over one window, " + time.Unix(from, 0).UTC().Format("2 Jan") + " to " + time.Unix(to, 0).UTC().Format("2 Jan 2006") + ", which ends earlier so that every listing's readings cover it: the two can name different leaders"
	}
	return note + "."
}

// filtersSet is how many of the "more filters" q sets.
func filtersSet(q map[string]string) int {
	n := 0
	for _, f := range filterFields {
		if q[f.name] != "" {
			n++
		}
	}
	return n
}

// maxOffered bounds a datalist: the most common permissions and topics.
const maxOffered = 80

// browseFilters fills in d the browser's filters from the query q: the
// fields with their values, the datalists of categories, topics and
// permissions to choose from, a chip for each filter set (a link to the
// same list without it), and the links to the list as files.
func browseFilters(d *render.BrowsePage, q map[string]string, f *figures.Figures) {
	for _, ff := range filterFields {
		field := render.Field{Name: ff.name, Label: ff.label, Kind: ff.kind, Value: q[ff.name], Min: ff.min, Max: ff.max, Step: ff.step, List: ff.list}
		for _, o := range ff.options {
			o.Selected = o.Value == q[ff.name] && (o.Value != "" || q[ff.name] == "")
			field.Options = append(field.Options, o)
		}
		if field.Value != "" {
			d.MoreOpen = true
		}
		d.Fields = append(d.Fields, field)
	}
	if f != nil {
		d.Lists = browseLists(q, f)
	}
	for _, name := range chipOrder {
		v, ok := q[name]
		if !ok || v == "" {
			continue
		}
		rest := url.Values{}
		for k, x := range q {
			if k != name && k != "cursor" && x != "" {
				rest.Set(k, x)
			}
		}
		text := chipLabels[name] + " " + v
		switch v {
		case "true", "all":
			text = chipLabels[name]
		case "false":
			text = "not " + chipLabels[name]
		}
		d.Chips = append(d.Chips, render.Link{Label: text, URL: withQuery("/listings", rest)})
	}
	file := withoutCursor(q)
	file.Del("compare") // the page's own
	file.Del("limit")
	for _, format := range []string{"csv", "ndjson"} {
		file.Set("format", format)
		d.Downloads = append(d.Downloads, render.Link{Label: map[string]string{"csv": "CSV", "ndjson": "NDJSON"}[format], URL: "/listings?" + file.Encode()})
	}
	d.FileRows = render.Int(v1.ListFileRows)
}

// browseLists are the datalists the browser's text fields offer: the
// categories of the store chosen (of every store without one), the most
// common topics and permissions.
func browseLists(q map[string]string, f *figures.Figures) []render.DataList {
	cats := render.DataList{ID: "categories"}
	counts := f.AllCategories()
	if st, err := views.ParseStore(q["store"]); err == nil && q["store"] != "" {
		counts = f.Categories(st)
	}
	for _, c := range counts {
		cats.Values = append(cats.Values, c.Name)
	}
	topics := render.DataList{ID: "topics"}
	for _, t := range f.Topics() {
		if len(topics.Values) == maxOffered {
			break
		}
		topics.Values = append(topics.Values, t.Slug)
	}
	perms := render.DataList{ID: "permissions"}
	for _, p := range f.Permissions() {
		if len(perms.Values) == maxOffered {
			break
		}
		perms.Values = append(perms.Values, p.Permission)
	}
	return []render.DataList{cats, topics, perms}
}
