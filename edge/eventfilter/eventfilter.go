// Package eventfilter reads the filters of the change events (stores,
// kinds, a permission) as the event feed, its stream and a webhook
// subscription take them, or says in a 400 problem what to change.
package eventfilter

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/changes"
)

// MaxNames bounds the stores and the kinds one filter names.
const MaxNames = 16

// Parse reads the values of store, kind and permission (each may be
// empty: no filter), or returns a 400 problem saying what to change.
func Parse(stores, kinds, p string) (changes.Filter, error) {
	var f changes.Filter
	if raw := stores; raw != "" {
		for i, name := range strings.Split(raw, ",") {
			st, err := views.ParseStore(name)
			if err != nil || i >= MaxNames {
				return f, problem.Newf(http.StatusBadRequest, "store: %.40q is not a store; use chrome, edge, firefox, apple or googleplay, or several comma-separated.", name).
					ForReaders(fmt.Sprintf("There is no store %.40q. The stores are chrome, edge, firefox, apple and googleplay.", name))
			}
			f.Stores = append(f.Stores, st)
		}
	}
	if raw := kinds; raw != "" {
		for i, name := range strings.Split(raw, ",") {
			k, ok := changes.ParseKind(name)
			if !ok || i >= MaxNames {
				names := make([]string, 0, 12)
				for _, k := range changes.Kinds() {
					names = append(names, k.String())
				}
				return f, problem.Newf(http.StatusBadRequest, "kind: %.40q is not a kind of change; use one of %s, or several comma-separated.", name, strings.Join(names, ", ")).
					ForReaders(fmt.Sprintf("There is no kind of change %.40q: the page of changes offers every kind.", name))
			}
			f.Kinds = append(f.Kinds, k)
		}
	}
	if p != "" {
		if len(p) > 200 {
			return f, problem.New(http.StatusBadRequest, "permission: a permission's name, such as tabs or cookies (at most 200 bytes).").
				ForReaders("A permission's name is a word or two, such as tabs or cookies, not that long.")
		}
		if len(f.Kinds) > 0 && (len(f.Kinds) > 1 || f.Kinds[0] != changes.Permissions) {
			return f, problem.New(http.StatusBadRequest, "permission selects permissions changes that added it: leave kind out, or set it to permissions.").
				ForReaders("A permission picks changes of permissions: choose that kind of change, or any kind.")
		}
		f.Permission = p
	}
	return f, nil
}
