package v1

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
)

// TestTransientAnswersAreNotKept: a category or the permissions read
// while their ClickHouse part failed, or while the ranks job ran, give
// answers marked not to be kept, in every codec; whole ones are kept.
func TestTransientAnswersAreNotKept(t *testing.T) {
	for _, c := range []struct {
		name string
		cat  Category
		perm Permissions
		want bool
	}{
		{"whole", Category{}, Permissions{}, false},
		{"missing", Category{WeeksMissing: true}, Permissions{ChangeMissing: true}, true},
		{"ranking", Category{Ranking: true}, Permissions{Ranking: true}, true},
	} {
		for name, run := range map[string]func() (bool, error){
			"category json": func() (bool, error) { a, err := categoryJSON.Encode(nil, &c.cat); return a != nil && a.NoStore, err },
			"permissions json": func() (bool, error) {
				a, err := permissionsJSON.Encode(nil, &c.perm)
				return a != nil && a.NoStore, err
			},
		} {
			if got, err := run(); err != nil || got != c.want {
				t.Errorf("%s, %s: not kept %v (%v), want %v", c.name, name, got, err, c.want)
			}
		}
		for _, f := range CategoryFiles() {
			if a, err := f.Encode(nil, &c.cat); err != nil || a.NoStore != c.want {
				t.Errorf("%s, the category's %s: not kept %v (%v), want %v", c.name, f.Name, a != nil && a.NoStore, err, c.want)
			}
		}
		for _, f := range PermissionsFiles() {
			if a, err := f.Encode(nil, &c.perm); err != nil || a.NoStore != c.want {
				t.Errorf("%s, the permissions' %s: not kept %v (%v), want %v", c.name, f.Name, a != nil && a.NoStore, err, c.want)
			}
		}
	}
}

// TestPermChangeMemo: the permissions' counts are read once a window
// while fresh, again for another day, again after their time to live,
// and after a failure or a read while the ranks job ran only after the
// shorter retry.
func TestPermChangeMemo(t *testing.T) {
	var m permChangeMemo
	loads := 0
	fail := false
	load := func(context.Context) ([2]map[string]int, error) {
		loads++
		if fail {
			return [2]map[string]int{}, errors.New("down")
		}
		return [2]map[string]int{{"tabs": 1}, {"tabs": 3}}, nil
	}
	ctx := context.Background()
	day := views.Day(20000)
	age := func(d time.Duration) { m.at = m.at.Add(-d) }
	steps := []struct {
		what    string
		do      func()
		day     views.Day
		ranking bool
		loads   int
	}{
		{"first", func() {}, day, false, 1},
		{"fresh", func() {}, day, false, 1},
		{"another day", func() {}, day + 1, false, 2},
		{"stale", func() { age(permChangeTTL) }, day + 1, false, 3},
		{"read while ranking", func() { age(permChangeTTL) }, day + 1, true, 4},
		{"ranking's, fresh", func() {}, day + 1, false, 4},
		{"ranking's, past the retry", func() { age(permChangeRetry) }, day + 1, false, 5},
		{"failed", func() { fail = true; age(permChangeTTL) }, day + 1, false, 6},
		{"failed, fresh", func() {}, day + 1, false, 6},
		{"failed, past the retry", func() { fail = false; age(permChangeRetry) }, day + 1, false, 7},
	}
	for _, s := range steps {
		s.do()
		days, err := m.get(ctx, s.day, s.ranking, load)
		if loads != s.loads {
			t.Fatalf("%s: %d loads, want %d", s.what, loads, s.loads)
		}
		if (err == nil) == fail && s.what != "failed, fresh" {
			t.Errorf("%s: err %v while failing %v", s.what, err, fail)
		}
		if err == nil && days[1]["tabs"] != 3 {
			t.Errorf("%s: %v", s.what, days)
		}
	}
}
