package analytics

import (
	"regexp"
	"strings"
	"testing"
)

func TestParseSearchQuery(t *testing.T) {
	cases := []struct {
		q, canon string
		err      string // part of the error, "" for none
	}{
		{"crash", "crash", ""},
		{"  Crash   Freeze ", "crash freeze", ""},
		{`"stopped working" after update`, `"stopped working" after update`, ""},
		{"crash OR freeze", "crash OR freeze", ""},
		{"crash* OR \"won't load\" battery", `crash* OR "won't load" battery`, ""},
		{"or and", "or and", ""}, // lower-case or is a word
		{"'; DROP TABLE reviews; --", "'; drop table reviews; --", ""},
		{"(a|b)+ [x]", "(a|b)+ [x]", ""},
		{"", "", "required"},
		{"   ", "", "required"},
		{`"unclosed phrase`, "", "not closed"},
		{`""`, "", "empty quoted phrase"},
		{"OR crash", "", "without a term before"},
		{"crash OR", "", "ends with OR"},
		{"crash OR OR freeze", "", "without a term before"},
		{"c*", "", "at least 2 characters"},
		{"*", "", "at least 2 characters"},
		{"cr*sh", "", "may only end a word"},
		{strings.Repeat("a ", 13), "", "at most 12"},
		{strings.Repeat("x", 300), "", "longer than"},
		{"\xff\xfe", "", "UTF-8"},
	}
	for _, c := range cases {
		q, err := ParseSearchQuery(c.q)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v", c.q, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: error %v, want one saying %q", c.q, err, c.err)
		case c.err == "" && q.String() != c.canon:
			t.Errorf("%q: parsed as %q, want %q", c.q, q.String(), c.canon)
		}
	}
}

// TestSearchTermPatterns checks that every term becomes a pattern that
// matches whole words of lower-cased text and treats the query's characters
// literally.
func TestSearchTermPatterns(t *testing.T) {
	cases := []struct {
		term     SearchTerm
		text     string
		matching bool
	}{
		{SearchTerm{Words: []string{"crash"}}, "It CRASHED", false},
		{SearchTerm{Words: []string{"crash"}}, "a crash, again", true},
		{SearchTerm{Words: []string{"crash"}, Prefix: true}, "It CRASHED", true},
		{SearchTerm{Words: []string{"stopped", "working"}}, "it stopped\n  working today", true},
		{SearchTerm{Words: []string{"stopped", "working"}}, "working stopped", false},
		{SearchTerm{Words: []string{"(a|b)+"}}, "aaa", false},
		{SearchTerm{Words: []string{"(a|b)+"}}, "x (a|b)+ y", true},
		{SearchTerm{Words: []string{"über"}}, "ÜBER alles", true},
		{SearchTerm{Words: []string{"c++"}}, "I love c++ a lot", true},
	}
	for _, c := range cases {
		re := regexp.MustCompile(c.term.pattern()) // RE2 syntax, as ClickHouse's match
		if got := re.MatchString(strings.ToLower(c.text)); got != c.matching {
			t.Errorf("term %+v on %q: %v, want %v (pattern %s)", c.term, c.text, got, c.matching, c.term.pattern())
		}
	}
}
