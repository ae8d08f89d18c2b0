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
		{"   ", "", "only spaces"},
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

// FuzzParseSearchQuery: no query makes the review-search parser panic. A
// query it accepts has at most 12 terms; its canonical form parses back to
// itself (the cache key is stable); and every term's pattern is a valid
// RE2 expression that finds the term's own words in lower-cased text, so
// no character of a query acts as a regular-expression operator.
func FuzzParseSearchQuery(f *testing.F) {
	for _, q := range []string{"crash", `"stopped working" after update`, "crash* OR \"won't load\" battery", "(a|b)+ [x]",
		"'; DROP TABLE reviews; --", `a\b`, "x OR", `"`, "ünïcødé* OR 日本語", "\u2028", `.* ^$ \d+`, strings.Repeat("ab ", 20)} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q, err := ParseSearchQuery(raw)
		if err != nil {
			return
		}
		terms := 0
		for _, g := range q.Groups {
			terms += len(g)
			for _, term := range g {
				re, err := regexp.Compile(term.pattern())
				if err != nil {
					t.Fatalf("%q: pattern %q: %v", raw, term.pattern(), err)
				}
				text := "x " + strings.ToLower(strings.Join(term.Words, " ")) + " x"
				if !re.MatchString(text) {
					t.Fatalf("%q: pattern %q does not find its own words in %q", raw, term.pattern(), text)
				}
			}
		}
		if terms == 0 || terms > maxSearchTerms {
			t.Fatalf("%q: %d terms accepted", raw, terms)
		}
		back, err := ParseSearchQuery(q.String())
		if err != nil || back.String() != q.String() {
			t.Fatalf("%q: canonical %q parses back as %q (%v)", raw, q.String(), back.String(), err)
		}
	})
}
