package pages

import (
	"net/url"
	"strconv"

	"github.com/edge-stats/edge/edge/pages/render"
	"github.com/edge-stats/edge/edge/read"
	v1 "github.com/edge-stats/edge/edge/v1"
	"github.com/edge-stats/edge/views"
)

// developerHandler answers GET /developers/{store}/{developer}: every
// listing of the developer in the store, its total size, the same
// extensions in other stores, and the listings it took over or gave up
// (an html codec of v1.DeveloperRead); or their files.
func (s *Pages) developerHandler() read.Handler {
	return figuresPage(s, *v1.DeveloperRead(), "/developers/:store/:developer", developerHTML, v1.DeveloperFiles()...)
}

// DeveloperURL is the address of developer's page in store.
func DeveloperURL(store, developer string) string {
	return "/developers/" + store + "/" + url.PathEscape(developer)
}

// developerHTML is the page of developer v.
func developerHTML(v *v1.Developer) ([]byte, error) {
	st, _ := views.ParseStore(v.Store)
	l := render.List{Caption: "Listings of " + v.Developer + " in " + v.Store + ", live ones first, largest first", Empty: "None.",
		Columns: []render.Column{{Label: "Size (" + st.SizeMeasure() + ")", Definition: "size"}, {Label: "Rating", Definition: "rating"}}}
	for i := range v.Listings {
		doc := &v.Listings[i]
		name := doc.Name
		if name == "" {
			name = doc.ID
		}
		e := render.Entry{Position: i + 1, Name: name, URL: "/listings/" + doc.Store + "/" + url.PathEscape(doc.ID),
			Figures: []render.Figure{render.IntFigure("listings."+strconv.Itoa(i)+".size", doc.Size), render.RatingFigure("listings."+strconv.Itoa(i)+".rating", doc.Rating)}}
		if !doc.Live {
			e.Developer = "delisted"
		}
		l.Entries = append(l.Entries, e)
	}
	d := render.DeveloperPage{Name: v.Developer, Store: v.Store, List: l, Live: v.Live, Listed: v.Total, Shown: len(v.Listings),
		TotalSize: render.Int(v.TotalSize), SizeMeasure: v.SizeMeasure, JSONURL: "/api/v1" + DeveloperURL(v.Store, v.Developer), PageURL: DeveloperURL(v.Store, v.Developer)}
	for _, o := range v.Elsewhere {
		name := o.Name
		if name == "" {
			name = o.ID
		}
		d.Elsewhere = append(d.Elsewhere, render.DeveloperLink{Name: name, Store: o.Store, URL: "/listings/" + o.Store + "/" + url.PathEscape(o.ID),
			Developer: o.Developer, DeveloperURL: DeveloperURL(o.Store, o.Developer)})
	}
	for _, e := range v.Ownership {
		ev := pageEvent(e, v.Lookup)
		if e.After != nil && *e.After == v.Developer {
			ev.What = "came to " + v.Developer + ": " + ev.What
		} else {
			ev.What = "left " + v.Developer + ": " + ev.What
		}
		d.Ownership = append(d.Ownership, ev)
	}
	return render.RenderDeveloper(d)
}
