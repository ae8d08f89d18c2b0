package views

import (
	"testing"
	"time"
)

func TestListingFigures(t *testing.T) {
	var l Listing
	if _, ok := l.Usage(); ok {
		t.Error("zero listing has a usage figure")
	}
	if _, ok := l.Rating(); ok {
		t.Error("zero listing is rated")
	}
	l.SetUsage(0, true)
	if v, ok := l.Usage(); !ok || v != 0 {
		t.Errorf("usage 0 read back as %d, %v", v, ok)
	}
	l.SetRating(4.37, true)
	if v, ok := l.Rating(); !ok || RoundRating(v) != 4.37 {
		t.Errorf("rating 4.37 read back as %v, %v", v, ok)
	}
	l.SetRatingCount(12, true)
	l.Store = Apple
	if v, ok := l.Size(); !ok || v != 12 {
		t.Errorf("apple size %d, %v; want its rating count 12", v, ok)
	}
	l.Store = Chrome
	if v, ok := l.Size(); !ok || v != 0 {
		t.Errorf("chrome size %d, %v; want its usage 0", v, ok)
	}
	l.SetUsage(5, false)
	if _, ok := l.Size(); ok {
		t.Error("missing usage gives a size")
	}
}

func TestDay(t *testing.T) {
	for _, c := range []struct {
		at   time.Time
		want string
	}{
		{time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), "2026-01-01"},
		{time.Date(2025, 12, 31, 23, 59, 59, 0, time.UTC), "2025-12-31"},
		{time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC), "1969-12-31"},
		{time.Date(2026, 1, 1, 1, 0, 0, 0, time.FixedZone("x", 2*3600)), "2025-12-31"},
	} {
		if got := DayOf(c.at).String(); got != c.want {
			t.Errorf("DayOf(%v) = %s, want %s", c.at, got, c.want)
		}
	}
	if NoDay.Valid() || NoDay.String() != "" {
		t.Error("NoDay is a date")
	}
}

func TestParseStore(t *testing.T) {
	for i, name := range []string{"chrome", "edge", "firefox", "apple", "googleplay"} {
		s, err := ParseStore(name)
		if err != nil || s != Store(i) || s.String() != name {
			t.Errorf("ParseStore(%q) = %v, %v", name, s, err)
		}
	}
	for _, bad := range []string{"", "Chrome", "safari", "0"} {
		if _, err := ParseStore(bad); err == nil {
			t.Errorf("ParseStore(%q) accepted", bad)
		}
	}
}
