package analytics

import (
	"slices"
	"strconv"
	"strings"
	"testing"
)

// joinList is joinedPermissions' serialisation, done in Go.
func joinList(list []string) string {
	var b strings.Builder
	for _, s := range list {
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	return b.String()
}

// TestSplitJoined reads lists whose elements hold what a separator-based
// form would trip on (colons, digits, empty strings, newlines, UTF-8) and
// refuses forms ClickHouse never writes.
func TestSplitJoined(t *testing.T) {
	for _, list := range [][]string{
		{"storage"}, {"storage", "activeTab", "tabs"}, {"", "a", ""}, {"3:abc", "12:", ":"},
		{"line\nbreak", "ü日", strings.Repeat("x", 1234)}, {"\x00", "1"},
	} {
		got, err := splitJoined(joinList(list))
		if err != nil || !slices.Equal(got, list) {
			t.Errorf("splitJoined(%q) = %q, %v; want %q", joinList(list), got, err, list)
		}
	}
	for _, bad := range []string{"x", "3:ab", ":a", "-1:", "1", "99999999999:a", "1:a2", "a:b", "+1:a", "01:a"} {
		if got, err := splitJoined(bad); err == nil {
			t.Errorf("splitJoined(%q) = %q, want an error", bad, got)
		}
	}
}

// FuzzSplitJoined checks that any list survives the round trip and that
// no input panics or yields elements it does not hold.
func FuzzSplitJoined(f *testing.F) {
	f.Add("7:storage9:activeTab", "a", "")
	f.Add("", "1:", ":")
	f.Fuzz(func(t *testing.T, s, a, b string) {
		if got, err := splitJoined(s); err == nil && joinList(got) != s {
			t.Fatalf("splitJoined(%q) = %q, which joins to %q", s, got, joinList(got))
		}
		list := []string{a, b}
		if got, err := splitJoined(joinList(list)); err != nil || !slices.Equal(got, list) {
			t.Fatalf("round trip of %q: %q, %v", list, got, err)
		}
	})
}
