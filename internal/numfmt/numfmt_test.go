package numfmt

import (
	"math"
	"testing"
)

func TestInt(t *testing.T) {
	for _, c := range []struct {
		n    int64
		want string
	}{
		{0, "0"}, {7, "7"}, {999, "999"}, {1000, "1,000"}, {1234567, "1,234,567"}, {-5, "−5"}, {-1000, "−1,000"},
		{math.MaxInt64, "9,223,372,036,854,775,807"}, {math.MinInt64, "−9,223,372,036,854,775,808"},
	} {
		if got := Int(c.n); got != c.want {
			t.Errorf("Int(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
