package series

import (
	"math"
	"time"

	"github.com/edge-stats/edge/views"
)

// Instant is a listing's figures at one instant, each by the one rule
// (views.ValueAt): the reading on the instant, or the straight line
// between the readings around it when they lie at most the gap apart;
// nil when there is none.
type Instant struct {
	At           time.Time
	Size         *int64
	Usage        *int64
	RatingCount  *int64
	Rating       *float64    // on the line too, to two decimals
	Readings     []time.Time // the readings the size comes from: one, or the two around the instant
	Interpolated bool        // the size lies between two readings
}

// AtInstant returns the figures of a listing of store s at instant, from
// its readings rs (every reading, not one a day; oldest first), with
// readings around the instant at most gap seconds apart
// (views.GapFor the span the instant is an end of). rs needs to hold
// only the readings within gap of the instant: no others can count.
func AtInstant(rs []Reading, s views.Store, instant time.Time, gap int64) Instant {
	in := Instant{At: instant.UTC()}
	t := instant.Unix()
	whole := func(fig func(*Reading) *int64) (views.Base, bool) {
		var before, after views.Reading
		for i := range rs {
			v := fig(&rs[i])
			if v == nil {
				continue
			}
			at := rs[i].At.Unix()
			if at <= t {
				before = views.Reading{Value: *v, At: at}
			} else if after.At == 0 {
				after = views.Reading{Value: *v, At: at}
			}
		}
		return views.ValueAt(t, before, after, gap)
	}
	get := func(fig func(*Reading) *int64) *int64 {
		if b, ok := whole(fig); ok {
			return &b.Value
		}
		return nil
	}
	if b, ok := whole(func(r *Reading) *int64 { return r.Size(s) }); ok {
		in.Size, in.Interpolated = &b.Value, b.After != 0
		in.Readings = []time.Time{time.Unix(b.At, 0).UTC()}
		if b.After != 0 {
			in.Readings = append(in.Readings, time.Unix(b.After, 0).UTC())
		}
	}
	in.Usage = get(func(r *Reading) *int64 { return r.Usage })
	in.RatingCount = get(func(r *Reading) *int64 { return r.RatingCount })
	var before, after *Reading
	for i := range rs {
		if rs[i].Rating == nil {
			continue
		}
		if rs[i].At.Unix() <= t {
			before = &rs[i]
		} else if after == nil {
			after = &rs[i]
		}
	}
	if before != nil {
		var afterAt int64
		if after != nil {
			afterAt = after.At.Unix()
		}
		if f, ok := views.Between(t, before.At.Unix(), afterAt, gap); ok {
			v := *before.Rating
			if f != 0 {
				v += f * (*after.Rating - v)
			}
			v = math.Round(v*100) / 100
			in.Rating = &v
		}
	}
	return in
}
