package replica

import (
	"hash/maphash"
	"slices"
	"strings"
)

// Interner shares one copy of equal strings, such as category names,
// developers, permissions and topics, across the listings of a replica,
// and one copy of equal string lists (permission sets, topic sets), so
// that a list repeated by many listings costs its slice header alone.
// It is not safe for concurrent use.
type Interner struct {
	m      map[string]string
	lists  map[uint64][]string // by a hash of the list; a collision is simply not shared
	h      maphash.Hash
	byForm map[string][]string // lists by their serialised form (List)
}

// NewInterner returns an empty interner.
func NewInterner() *Interner {
	return &Interner{m: make(map[string]string), lists: make(map[uint64][]string), byForm: make(map[string][]string)}
}

// List returns the shared copy of the list whose serialised form is form,
// calling parse only for a form not seen before: a list that many
// listings repeat costs one map lookup a listing. An empty form is the
// empty list (nil).
func (in *Interner) List(form string, parse func(string) ([]string, error)) ([]string, error) {
	if form == "" {
		return nil, nil
	}
	if v, ok := in.byForm[form]; ok {
		return v, nil
	}
	ss, err := parse(form)
	if err != nil {
		return nil, err
	}
	v := in.Strings(ss)
	in.byForm[strings.Clone(form)] = v
	return v, nil
}

// String returns the shared copy of s.
func (in *Interner) String(s string) string {
	if v, ok := in.m[s]; ok {
		return v
	}
	in.m[s] = s
	return s
}

// Strings returns the shared copy of the list ss, whose elements are
// shared copies too; an empty list is nil. It may write into ss; the
// result must not be modified.
func (in *Interner) Strings(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	in.h.Reset()
	for _, s := range ss {
		in.h.WriteString(s)
		in.h.WriteByte(0)
	}
	sum := in.h.Sum64()
	v, seen := in.lists[sum]
	if seen && slices.Equal(v, ss) {
		return v
	}
	for i, s := range ss {
		ss[i] = in.String(s)
	}
	ss = slices.Clip(ss)
	if !seen {
		in.lists[sum] = ss
	}
	return ss
}
