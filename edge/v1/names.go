package v1

import (
	"fmt"
	"net/http"

	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/figures"
)

// One rule for category and tag values across the API: a category is
// named by its name in any case or by its slug ("Developer Tools",
// "developer tools", "developer-tools"), a tag by its slug in any case;
// a value that names none is a 404 that points to the list to choose from.

// categoryArg returns the name of the category v names in store (nil: in
// any store), or a 404.
func categoryArg(f *figures.Figures, store *views.Store, v string) (string, error) {
	if name, ok := f.FindCategory(store, v); ok {
		return name, nil
	}
	if store == nil {
		return "", problem.Newf(http.StatusNotFound, "category: no store has a category %.80q; take a name or slug from /api/v1/categories/{store}.", v).
			ForReaders(fmt.Sprintf("No store has a category %.80q. A store's page lists its categories.", v))
	}
	return "", problem.Newf(http.StatusNotFound, "category: %s has no category %.80q; take a name or slug from /api/v1/categories/%s.", *store, v, *store).
		ForReaders(fmt.Sprintf("The %s store has no category %.80q. Its page lists its categories.", *store, v))
}

// TagArg returns the slug of the topic v names, or a 404.
func TagArg(f *figures.Figures, v string) (string, error) {
	if slug, ok := f.FindTopic(v); ok {
		return slug, nil
	}
	return "", problem.Newf(http.StatusNotFound, "tag: there is no topic %q; take a slug from /api/v1/tags.", v).
		ForReaders(fmt.Sprintf("There is no topic %.80q. The page of topics lists every one.", v))
}
