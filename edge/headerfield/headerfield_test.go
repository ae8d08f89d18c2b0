package headerfield

import "testing"

func TestQValue(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"1", 1000, true}, {"0", 0, true}, {"0.5", 500, true}, {"0.125", 125, true}, {"1.000", 1000, true},
		{"1.", 1000, true}, {"1.001", 0, false}, {"0.1234", 0, false}, {"2", 0, false}, {"", 0, false},
		{".5", 0, false}, {"0,5", 0, false}, {"0.a", 0, false},
	} {
		if got, ok := QValue([]byte(tc.in)); got != tc.want || ok != tc.ok {
			t.Errorf("QValue(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestTokensAndWhiteSpace(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want bool
	}{{"gzip", true}, {"x-y.z~", true}, {"", false}, {"a b", false}, {"a/b", false}, {"é", false}} {
		if got := IsToken([]byte(tc.in)); got != tc.want {
			t.Errorf("IsToken(%q) = %v", tc.in, got)
		}
	}
	if got := string(TrimOWS([]byte(" \t gzip \t"))); got != "gzip" {
		t.Errorf("TrimOWS: %q", got)
	}
}
