package views

import (
	"strings"
	"unicode"
)

// CategorySlug is a category name in lower case with every run of
// characters other than letters and digits as one dash, trimmed:
// "Photos & Design" is photos-design.
func CategorySlug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
		} else {
			dash = true
		}
	}
	return b.String()
}
