package v1

import (
	"testing"
	"time"
)

// TestFileReads holds a reading's bounds: requests of no bytes (HEAD,
// 304, 416) still take requestFloor and end after maxRequests, bytes past
// twice the file and the slack end it, its window ends it, and another
// caller or file has a reading of its own.
func TestFileReads(t *testing.T) {
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	const size = 100 << 20
	cases := []struct {
		name string
		n    int64 // bytes of each request after the first
		at   time.Duration
		want int // requests covered after the first
	}{
		{"empty answers", 0, 0, maxRequests - 1},
		{"whole files", size, 0, 2},
		{"past the window", 0, readingWindow, 0},
	}
	for _, c := range cases {
		r := newFileReads()
		r.start("key:a", "f", size, 0, now)
		got := 0
		for r.take("key:a", "f", c.n, now.Add(c.at)) {
			got++
		}
		if got != c.want {
			t.Errorf("%s: %d requests covered, want %d", c.name, got, c.want)
		}
	}
	r := newFileReads()
	r.start("key:a", "f", size, 0, now)
	if r.take("key:b", "f", 0, now) || r.take("key:a", "g", 0, now) {
		t.Error("a reading covers another caller or another file")
	}
	small := newFileReads()
	small.start("key:a", "f", 1000, 0, now)
	got := 0
	for small.take("key:a", "f", 0, now) {
		got++
	}
	if want := int((2*1000 + readingSlack - requestFloor) / requestFloor); got != want {
		t.Errorf("a small file's empty answers: %d covered, want %d", got, want)
	}
}
