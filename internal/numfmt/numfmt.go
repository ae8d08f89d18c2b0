// Package numfmt formats numbers for people, as the pages and the API's
// notes write them: thousands grouped by commas, a minus sign (U+2212)
// before a negative number.
package numfmt

import "strconv"

// Int formats n for a person: 1234567 is "1,234,567", -5 is "−5".
func Int(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	out := make([]byte, 0, len(s)+len(s)/3+3)
	if neg {
		out = append(out, "−"...)
	}
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}
