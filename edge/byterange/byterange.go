// Package byterange reads the Range header of a request for a file of a
// known size (RFC 9110, section 14) and writes the multipart answer of
// several ranges. It is the one parser of that header: strict where the
// RFC lets a server ignore a header it does not like (an answer of the
// whole file is always allowed), bounded in what one header may ask for.
package byterange

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Range is the bytes [Start, Start+Length) of a file.
type Range struct {
	Start, Length int64
}

// Outcome is what a Range header asks for.
type Outcome int

// The outcomes of Parse.
const (
	// Whole: no range, or one the server ignores (another unit, a
	// header that does not parse, too many ranges): answer 200 with the
	// whole file.
	Whole Outcome = iota
	// Partial: answer 206 with the ranges.
	Partial
	// Unsatisfiable: no range overlaps the file: answer 416.
	Unsatisfiable
)

// MaxRanges is the most ranges a header may list; a header with more is
// ignored (the whole file is sent), so that a header cannot make the
// answer many times the file.
const MaxRanges = 64

// mergeGap is how close two ranges are merged across: a part's own
// headers are about that long, so a gap shorter is cheaper sent.
const mergeGap = 80

// Parse reads header, a Range header's value, for a file of size bytes.
// Ranges come back sorted, overlapping or near ones merged (RFC 9110
// 14.2 lets a server coalesce them), so that their total never exceeds
// the file.
func Parse(header string, size int64) ([]Range, Outcome) {
	unit, set, ok := strings.Cut(header, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") || size < 0 {
		return nil, Whole
	}
	var out []Range
	specs := 0
	for spec := range strings.SplitSeq(set, ",") {
		spec = strings.Trim(spec, " \t")
		if spec == "" {
			continue // an empty list element is allowed
		}
		if specs++; specs > MaxRanges {
			return nil, Whole
		}
		r, satisfiable, ok := parseSpec(spec, size)
		if !ok {
			return nil, Whole
		}
		if satisfiable {
			out = append(out, r)
		}
	}
	if specs == 0 {
		return nil, Whole
	}
	if len(out) == 0 {
		return nil, Unsatisfiable
	}
	return merge(out), Partial
}

// parseSpec reads one byte-range-spec or suffix-byte-range-spec.
func parseSpec(spec string, size int64) (r Range, satisfiable, ok bool) {
	first, last, ok := strings.Cut(spec, "-")
	if !ok {
		return r, false, false
	}
	if first == "" { // -N: the last N bytes
		n, ok := number(last)
		if !ok {
			return r, false, false
		}
		if n == 0 || size == 0 {
			return r, false, true
		}
		n = min(n, size)
		return Range{Start: size - n, Length: n}, true, true
	}
	start, ok := number(first)
	if !ok {
		return r, false, false
	}
	end := size - 1
	if last != "" {
		e, ok := number(last)
		if !ok || e < start {
			return r, false, false
		}
		end = min(e, size-1)
	}
	if start >= size {
		return r, false, true
	}
	return Range{Start: start, Length: end - start + 1}, true, true
}

// number reads a run of ASCII digits; a number past int64 reads as the
// largest (it is past any file).
func number(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return 1<<63 - 1, true // out of range: digits only, so too large
	}
	return n, true
}

// merge sorts rs and merges those that overlap or lie within mergeGap.
func merge(rs []Range) []Range {
	slices.SortFunc(rs, func(a, b Range) int { return cmp.Compare(a.Start, b.Start) })
	out := rs[:1]
	for _, r := range rs[1:] {
		p := &out[len(out)-1]
		if end := p.Start + p.Length; r.Start <= end+mergeGap {
			p.Length = max(end, r.Start+r.Length) - p.Start
			continue
		}
		out = append(out, r)
	}
	return out
}

// ContentRange returns the Content-Range value of r in a file of size.
func ContentRange(r Range, size int64) string {
	return "bytes " + strconv.FormatInt(r.Start, 10) + "-" + strconv.FormatInt(r.Start+r.Length-1, 10) + "/" + strconv.FormatInt(size, 10)
}

// Unsatisfied returns the Content-Range value of a 416 for a file of size.
func Unsatisfied(size int64) string { return "bytes */" + strconv.FormatInt(size, 10) }
