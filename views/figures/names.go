package figures

import (
	"cmp"
	"slices"
	"strings"

	"github.com/edge-stats/edge/views"
)

// FindCategory returns the category of store s (or, with s nil, of any
// store) that v names: its name in any case, or its slug. ok is false
// when no category of a live listing has that name or slug. Across stores
// the first match in name order is taken.
func (f *Figures) FindCategory(s *views.Store, v string) (name string, ok bool) {
	cats := f.allCategories
	if s != nil {
		cats = f.Categories(*s)
	}
	for _, c := range cats {
		if c.Name == v {
			return c.Name, true
		}
	}
	slug := views.CategorySlug(v)
	for _, c := range cats {
		if strings.EqualFold(c.Name, v) || (slug != "" && views.CategorySlug(c.Name) == slug) {
			return c.Name, true
		}
	}
	return "", false
}

// FindTopic returns the topic slug v names, in any case; ok is false when
// no live listing has that topic.
func (f *Figures) FindTopic(v string) (slug string, ok bool) {
	v = strings.ToLower(strings.TrimSpace(v))
	i, found := slices.BinarySearchFunc(f.topics, v, func(t Topic, s string) int { return cmp.Compare(t.Slug, s) })
	if !found {
		return "", false
	}
	return f.topics[i].Slug, true
}
