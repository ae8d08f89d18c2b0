package series

import (
	"math"
	"slices"

	"github.com/edge-stats/edge/views"
)

// The flags of a day of history (see Flag).
const (
	// FlagGap: the listing was not read for longer than usual before this
	// day: more days passed since its previous reading than its usual
	// spacing (the median over the series, at least 1). A listing the
	// crawler reads every third day is not flagged every third day; one
	// read daily is flagged after a day without a reading.
	FlagGap = "gap"
	// FlagJump: the size moved from the previous reading by more than the
	// listing's own history makes plausible (see JumpRule).
	FlagJump = "jump"
	// FlagRounding: the store changed how it rounds the size (from exact
	// figures to round ones, or back), so a part of the change is the
	// rounding, not the listing.
	FlagRounding = "rounding"
	// FlagRelisted: the listing came back to its store that day after
	// having been delisted.
	FlagRelisted = "relisted"
)

// The jump rule. A step from one reading with a size to the next is a
// jump when the size moved by at least JumpMinChange, and its change in
// log terms a day, |ln((b+1)/(a+1))| / days, is over both JumpFactor times
// the median of the same over every step of the series (how much the
// listing moves on a usual day) and JumpFloor (a 25% move in a day).
// The median is robust to the jumps themselves, and the floor keeps a
// listing that barely moves from flagging every ordinary day.
const (
	JumpFactor    = 10
	JumpMinChange = 100
)

// JumpFloor is the least log change a day that is a jump: ln 1.25.
var JumpFloor = math.Log(1.25)

// The rounding rule: the store changed its rounding at a reading when the
// sizes from it on (it and the next reading, where there is one) are all
// multiples of a power of ten, at least RoundingUnit, a hundred times the
// largest that divides the two sizes before it (or the other way round:
// from round figures to finer ones). Sizes under RoundingMin are left
// alone. 1,234,567 and 1,235,001 then 1,200,000 and 1,300,000 is a change;
// one round figure among exact ones (123,000 between 123,457 and 123,461)
// is not, nor is a figure that happens to end in two zeros.
const (
	RoundingMin  = 1000
	RoundingUnit = 1000
)

// DayFlags are the flags of one reading of a series.
type DayFlags struct {
	Flags []string // nil when there is nothing to know
	// DaysSincePrevious is the days since the previous reading; 0 for
	// the first reading of the series.
	DaysSincePrevious int
}

// Flag returns the flags of each reading of rs (oldest first, one a day)
// of a listing of store s; relisted are the days the listing came back
// after being delisted (the first reading on or after each is flagged).
func Flag(s views.Store, rs []Reading, relisted []views.Day) []DayFlags {
	out := make([]DayFlags, len(rs))
	add := func(i int, f string) {
		if !slices.Contains(out[i].Flags, f) {
			out[i].Flags = append(out[i].Flags, f)
		}
	}
	spacings := make([]float64, 0, len(rs))
	for i := 1; i < len(rs); i++ {
		out[i].DaysSincePrevious = int(rs[i].Day - rs[i-1].Day)
		spacings = append(spacings, float64(out[i].DaysSincePrevious))
	}
	if len(spacings) > 0 {
		usual := max(1, median(spacings))
		for i := 1; i < len(rs); i++ {
			if float64(out[i].DaysSincePrevious) > usual {
				add(i, FlagGap)
			}
		}
	}
	for _, d := range relisted {
		if i, _ := slices.BinarySearchFunc(rs, d, func(r Reading, d views.Day) int { return int(r.Day - d) }); i < len(rs) {
			add(i, FlagRelisted)
		}
	}
	// The readings with a size, and each step's log change a day.
	var sized []int
	for i := range rs {
		if rs[i].Size(s) != nil {
			sized = append(sized, i)
		}
	}
	if len(sized) < 2 {
		return out
	}
	rates := make([]float64, len(sized)-1)
	for k := 1; k < len(sized); k++ {
		a, b := &rs[sized[k-1]], &rs[sized[k]]
		rates[k-1] = math.Abs(math.Log(float64(*b.Size(s)+1)/float64(*a.Size(s)+1))) / float64(b.Day-a.Day)
	}
	usual := median(rates)
	bound := max(JumpFactor*usual, JumpFloor)
	for k := 1; k < len(sized); k++ {
		a, b := *rs[sized[k-1]].Size(s), *rs[sized[k]].Size(s)
		if abs(b-a) >= JumpMinChange && rates[k-1] > bound {
			add(sized[k], FlagJump)
		}
		if roundingChange(s, rs, sized, k) {
			add(sized[k], FlagRounding)
		}
	}
	return out
}

// roundingChange reports whether the store changed its rounding at the
// k-th of the sized readings (see RoundingMin).
func roundingChange(s views.Store, rs []Reading, sized []int, k int) bool {
	g := func(j int) (int64, bool) {
		if j < 0 || j >= len(sized) {
			return 0, false
		}
		v := *rs[sized[j]].Size(s)
		return granularity(v), v >= RoundingMin
	}
	// The granularities before (k-2, k-1) and from k on (k, k+1).
	var before, after []int64
	for _, j := range []int{k - 2, k - 1} {
		if v, ok := g(j); ok {
			before = append(before, v)
		} else if j == k-1 || j >= 0 {
			return false
		}
	}
	for _, j := range []int{k, k + 1} {
		if v, ok := g(j); ok {
			after = append(after, v)
		} else if j == k || j < len(sized) {
			return false
		}
	}
	coarser := slices.Min(after) >= RoundingUnit && slices.Min(after) >= 100*slices.Max(before)
	finer := slices.Min(before) >= RoundingUnit && slices.Min(before) >= 100*slices.Max(after)
	return coarser || finer
}

// granularity returns the largest power of ten up to 10^6 that divides v
// (1 for 0).
func granularity(v int64) int64 {
	g := int64(1)
	for v != 0 && v%(g*10) == 0 && g < 1_000_000 {
		g *= 10
	}
	return g
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func abs(v int64) int64 {
	if v < 0 {
		return -v
	}
	return v
}
