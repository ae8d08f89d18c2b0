package querykey

import (
	"reflect"
	"testing"
	"time"

	"github.com/edge-stats/edge/edge/answer"
	"github.com/edge-stats/edge/views/listq"
)

// variants returns values of a field's type that a query may hold, all
// different: for a pointer, nil and pointers to two different values.
func variants(t *testing.T, typ reflect.Type) []reflect.Value {
	t.Helper()
	if typ.Kind() == reflect.Pointer {
		out := []reflect.Value{reflect.Zero(typ)}
		for _, v := range variants(t, typ.Elem()) {
			p := reflect.New(typ.Elem())
			p.Elem().Set(v)
			out = append(out, p)
		}
		return out
	}
	a, b := reflect.New(typ).Elem(), reflect.New(typ).Elem()
	switch typ.Kind() {
	case reflect.Bool:
		b.SetBool(true)
	case reflect.String:
		a.SetString("a")
		b.SetString("b")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		a.SetInt(1)
		b.SetInt(2)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		a.SetUint(1)
		b.SetUint(2)
	case reflect.Float32, reflect.Float64:
		a.SetFloat(1.5)
		b.SetFloat(2.5)
	default:
		t.Fatalf("a query field of type %s: teach this test its values", typ)
	}
	return []reflect.Value{a, b}
}

// TestListCoversEveryField fails when a field of listq.Query
// does not change the cache key: a new filter left out of List would
// serve one cached answer for different queries.
func TestListCoversEveryField(t *testing.T) {
	base := listq.Query{Page: 3, PageSize: 7}
	typ := reflect.TypeOf(base)
	for i := range typ.NumField() {
		f := typ.Field(i)
		if f.Name == "Deadline" {
			continue // the search's time budget: it does not change a cached answer
		}
		seen := map[string]string{}
		for _, v := range variants(t, f.Type) {
			q := base
			reflect.ValueOf(&q).Elem().Field(i).Set(v)
			key := List(answer.NewKey(nil, "/r", 1), &q).String()
			if prev, ok := seen[key]; ok {
				t.Errorf("%s: %s and %v give the same key %s", f.Name, prev, v, key)
			}
			seen[key] = v.String()
		}
	}
	q := base
	q.Deadline = time.Now()
	if List(answer.NewKey(nil, "/r", 1), &q).String() != List(answer.NewKey(nil, "/r", 1), &base).String() {
		t.Error("the deadline changed the key: every search would miss the cache")
	}
}
