package series

import (
	"testing"
	"time"

	"github.com/edge-stats/edge/views"
)

// TestAtInstant checks each figure at an instant from raw readings: the
// reading on it, the line between the two around it (each figure from the
// readings that have it), none when they lie further apart than the gap.
func TestAtInstant(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	n := func(v int64) *int64 { return &v }
	f := func(v float64) *float64 { return &v }
	rs := []Reading{
		{At: t0, Usage: n(100), RatingCount: n(10), Rating: f(4.0)},
		{At: t0.Add(12 * time.Hour), Usage: nil, RatingCount: n(20)},
		{At: t0.Add(24 * time.Hour), Usage: n(200), RatingCount: n(30), Rating: f(4.5)},
	}
	gap := views.GapFor(7 * 86400)

	on := AtInstant(rs, views.Chrome, t0, gap)
	if *on.Size != 100 || *on.Usage != 100 || *on.RatingCount != 10 || *on.Rating != 4.0 || on.Interpolated || len(on.Readings) != 1 || !on.Readings[0].Equal(t0) {
		t.Errorf("on a reading: %+v", on)
	}
	mid := AtInstant(rs, views.Chrome, t0.Add(6*time.Hour), gap)
	// usage: a quarter of the way from 100 to 200 (the noon reading has
	// none); ratings count: half-way from 10 to 20; rating: a quarter.
	if *mid.Size != 125 || *mid.Usage != 125 || *mid.RatingCount != 15 || *mid.Rating != 4.13 || !mid.Interpolated ||
		len(mid.Readings) != 2 || !mid.Readings[0].Equal(t0) || !mid.Readings[1].Equal(t0.Add(24*time.Hour)) {
		t.Errorf("between readings: %+v size %v rc %v rating %v", mid, *mid.Size, *mid.RatingCount, *mid.Rating)
	}
	apple := AtInstant(rs, views.Apple, t0.Add(6*time.Hour), gap)
	if *apple.Size != 15 || !apple.Readings[1].Equal(t0.Add(12*time.Hour)) {
		t.Errorf("apple's size is its ratings count: %+v", apple)
	}
	far := AtInstant(rs, views.Chrome, t0.Add(6*time.Hour), 3600)
	if far.Size != nil || far.Usage != nil || far.RatingCount != nil || far.Rating != nil || far.Readings != nil {
		t.Errorf("readings further apart than the gap: %+v", far)
	}
	after := AtInstant(rs, views.Chrome, t0.Add(48*time.Hour), gap)
	if after.Size != nil || after.Rating != nil {
		t.Errorf("after the newest reading: %+v", after)
	}
}
