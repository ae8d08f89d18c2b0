// Package listargs reads the listing filters of a query string into a
// listq.Query: typed parameters (numbers and whole numbers in a range,
// booleans, dates, versions), each refused with a 400 that names it and
// says what it takes, and the filters both APIs name alike (Shared), so
// that /api/extensions, /api/v1/listings and the listings' page read
// them with one parser.
package listargs

import (
	"net/http"
	"strconv"
	"time"

	"github.com/gofiber/fiber/v2/utils"
	"github.com/valyala/fasthttp"

	"github.com/edge-stats/edge/edge/problem"
	"github.com/edge-stats/edge/views"
	"github.com/edge-stats/edge/views/listq"
)

// Reader reads typed parameters of a query; the first that cannot be
// read is kept in Err, a 400 naming it, and later ones are not looked at
// for errors.
type Reader struct {
	Args *fasthttp.Args // the query, parsed once
	Err  *problem.Problem
}

// Str returns the first value of the parameter name, as fiber's Query
// does: the request's bytes, valid while the request is served; ok is
// false for a missing or empty value (a form's empty field).
func (r *Reader) Str(name string) (v string, ok bool) {
	v = utils.UnsafeString(r.Args.Peek(name))
	return v, v != ""
}

// Get returns the first value of the parameter name, or "".
func (r *Reader) Get(name string) string {
	v, _ := r.Str(name)
	return v
}

// Fail keeps the 400 of name's value v, which is not want, unless one is
// kept already; its reader's words name the filter by its label.
func (r *Reader) Fail(name, v, want string) { r.fail(name, v, want, want) }

// fail is Fail with what the value must be in a reader's words.
func (r *Reader) fail(name, v, want, words string) {
	if r.Err == nil {
		r.Err = problem.Newf(http.StatusBadRequest, "%s: %q is not %s.", name, v, want).
			ForReaders("The filter “" + label(name) + "” takes " + words + "; it was given “" + truncate(v, 40) + "”.")
	}
}

// Number reads name as a number from lo to hi; nil when it is missing.
func (r *Reader) Number(name string, lo, hi float64) *float64 {
	v, ok := r.Str(name)
	if !ok {
		return nil
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < lo || f > hi || f != f {
		r.Fail(name, v, "a number from "+strconv.FormatFloat(lo, 'f', -1, 64)+" to "+strconv.FormatFloat(hi, 'f', -1, 64))
		return nil
	}
	return &f
}

// Integer reads name as a whole number from lo to hi; nil when it is
// missing.
func (r *Reader) Integer(name string, lo, hi int64) *int64 {
	n, ok := r.IntValue(name, lo, hi)
	if !ok {
		return nil
	}
	kept := n // only a present value is moved to the heap
	return &kept
}

// IntValue is Integer without moving the value to the heap; ok is false
// when it is missing or refused.
func (r *Reader) IntValue(name string, lo, hi int64) (n int64, ok bool) {
	v, ok := r.Str(name)
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		r.Fail(name, v, "a whole number from "+strconv.FormatInt(lo, 10)+" to "+strconv.FormatInt(hi, 10))
		return 0, false
	}
	return n, true
}

// Bool reads name as true or false (1 or 0); nil when it is missing.
func (r *Reader) Bool(name string) *bool {
	v, ok := r.Str(name)
	if !ok {
		return nil
	}
	switch v {
	case "true", "1":
		b := true
		return &b
	case "false", "0":
		b := false
		return &b
	}
	r.Fail(name, v, "true or false")
	return nil
}

// Date reads name as a date, yyyy-mm-dd; nil when it is missing.
func (r *Reader) Date(name string) *views.Day {
	v, ok := r.Str(name)
	if !ok {
		return nil
	}
	t, err := time.Parse(time.DateOnly, v)
	if err != nil {
		r.fail(name, v, "a date of the form yyyy-mm-dd", "a date such as 2026-03-01 (the year, the month, the day)")
		return nil
	}
	d := views.DayOf(t)
	return &d
}

// Version reads name as a version that starts with a number (2.10); nil
// when it is missing.
func (r *Reader) Version(name string) *string {
	v, ok := r.Str(name)
	if !ok {
		return nil
	}
	if !views.VersionComparable(v) {
		r.Fail(name, v, "a version starting with a number, such as 2.10")
		return nil
	}
	kept := v // only a present value is moved to the heap
	return &kept
}

// Shared reads into q the filters both APIs name alike: featured, the
// rating and ratings-count ranges, the version range, the updated,
// first-seen and delisted date ranges, delisted listings included or
// only, the manifest version, a permission and the least access level.
func (r *Reader) Shared(q *listq.Query) {
	q.Featured = r.Bool("featured")
	q.MinRating, q.MaxRating = r.Number("minRating", 0, 5), r.Number("maxRating", 0, 5)
	q.MinRatingCount, q.MaxRatingCount = r.Integer("minRatingCount", 0, 1<<62), r.Integer("maxRatingCount", 0, 1<<62)
	q.MinVersion, q.MaxVersion = r.Version("minVersion"), r.Version("maxVersion")
	q.UpdatedAfter, q.UpdatedBefore = r.Date("updatedAfter"), r.Date("updatedBefore")
	q.FirstSeenAfter, q.FirstSeenBefore = r.Date("firstSeenAfter"), r.Date("firstSeenBefore")
	q.DelistedAfter, q.DelistedBefore = r.Date("delistedAfter"), r.Date("delistedBefore")
	if b := r.Bool("includeDelisted"); b != nil {
		q.IncludeDelisted = *b
	}
	if b := r.Bool("delistedOnly"); b != nil {
		q.DelistedOnly = *b
	}
	if n := r.Integer("manifestVersion", 2, 3); n != nil {
		mv := uint8(*n)
		q.ManifestVersion = &mv
	}
	if v, ok := r.Str("permission"); ok {
		kept := v // only a present value is moved to the heap
		q.Permission = &kept
	}
	if n := r.Integer("minAccessLevel", 1, 4); n != nil {
		al := uint8(*n)
		q.MinAccessLevel = &al
	}
}

// SharedNames are the parameters Shared reads, in the order a page's
// query and cache key take them.
var SharedNames = []string{"featured", "minRating", "maxRating", "minRatingCount", "maxRatingCount", "minVersion", "maxVersion",
	"updatedAfter", "updatedBefore", "firstSeenAfter", "firstSeenBefore", "delistedAfter", "delistedBefore",
	"includeDelisted", "delistedOnly", "manifestVersion", "permission", "minAccessLevel"}

// labels are the filters' names for readers, as the listings' page
// labels its fields.
var labels = map[string]string{
	"featured": "featured", "minRating": "rating from", "maxRating": "rating to",
	"minRatingCount": "ratings from", "maxRatingCount": "ratings to", "minVersion": "version from", "maxVersion": "version to",
	"updatedAfter": "updated from", "updatedBefore": "updated to", "firstSeenAfter": "first seen from", "firstSeenBefore": "first seen to",
	"delistedAfter": "delisted from", "delistedBefore": "delisted to", "includeDelisted": "delisted listings",
	"delistedOnly": "delisted listings", "manifestVersion": "manifest version", "permission": "permission",
	"minAccessLevel": "access", "kind": "type", "hostAccess": "site access",
}

// label is name's label for readers, or name.
func label(name string) string {
	if l, ok := labels[name]; ok {
		return l
	}
	return name
}

// truncate is s cut to n bytes at most, on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}
