package views

import "testing"

func TestCompareVersions(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
		ok   bool
	}{
		{"2.10", "2.9", 1, true},
		{"2.9", "2.10", -1, true},
		{"1.0", "1.0.0", 0, true},
		{"1.0.0.1", "1.0", 1, true},
		{"10", "9.99", 1, true},
		{"1.2-beta", "1.2", 0, true},
		{"1.2.", "1.2", 0, true},
		{"007", "7", 0, true},
		{"v1.2", "1.2", 0, false},
		{"1.2", "beta-3", 0, false},
		{"", "1", 0, false},
		{"Varies with device", "1", 0, false},
	} {
		got, ok := CompareVersions(c.a, c.b)
		if got != c.want || ok != c.ok {
			t.Errorf("CompareVersions(%q, %q) = %d, %v; want %d, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}
