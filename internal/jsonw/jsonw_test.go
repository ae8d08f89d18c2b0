package jsonw

import (
	"encoding/json"
	"math"
	"testing"
	"time"
)

// marshal is encoding/json's encoding of v, the reference.
func marshal(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var stringCases = []string{"", "plain", `quote " and \ backslash`, "\b\f\n\r\t\x00\x01\x1f\x7f", "<script>&amp;</script>",
	"line\u2028para\u2029", "bad \xff utf-8 \xc3", "truncated \xe2\x82", "日本語 ü Ω 😀", "\ufffd", "a\u2027b\u202ac"}

func TestStringAsEncodingJSON(t *testing.T) {
	for _, s := range stringCases {
		if got, want := string(String([]byte("x"), s)), "x"+marshal(t, s); got != want {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
	}
}

func FuzzString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(String(nil, s)), marshal(t, s); got != want {
			t.Fatalf("String(%q) = %s, want %s", s, got, want)
		}
	})
}

var floatCases = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 4.35, 1e-6, 9.99e-7, 1e-7, 1.5e-9, 123456789, 1e20, 1e21, 1.2345e22,
	-3.5e-10, math.MaxFloat64, math.SmallestNonzeroFloat64, 2.0 / 3, 100.25}

func TestFloatAsEncodingJSON(t *testing.T) {
	for _, v := range floatCases {
		if got, want := string(Float(nil, v)), marshal(t, v); got != want {
			t.Errorf("Float(%v) = %s, want %s", v, got, want)
		}
	}
}

// TestFloatWritesNullForNonFinite: a value encoding/json refuses is
// written null, so that one bad figure does not fail a page.
func TestFloatWritesNullForNonFinite(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got := string(Float(nil, v)); got != "null" {
			t.Errorf("Float(%v) = %s, want null", v, got)
		}
	}
}

func FuzzFloat(f *testing.F) {
	for _, v := range floatCases {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v float64) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return
		}
		if got, want := string(Float(nil, v)), marshal(t, v); got != want {
			t.Fatalf("Float(%v) = %s, want %s", v, got, want)
		}
	})
}

func TestTimeAsMarshalJSON(t *testing.T) {
	for _, tm := range []time.Time{time.Unix(0, 0).UTC(), time.Unix(1764147600, 0).UTC(), time.Unix(1764147600, 120).UTC(),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC), time.Date(2026, 3, 1, 2, 3, 4, 5e8, time.FixedZone("x", 5400))} {
		if got, want := string(TimePtr(nil, &tm)), marshal(t, tm); got != want {
			t.Errorf("Time(%v) = %s, want %s", tm, got, want)
		}
	}
	if got := string(TimePtr(nil, nil)); got != "null" {
		t.Errorf("TimePtr(nil) = %s", got)
	}
}

func TestValuesAsEncodingJSON(t *testing.T) {
	s, n, u, fl := "x<y", int64(-42), uint8(3), 2.5
	type doc struct {
		A *string  `json:"a"`
		B *string  `json:"b"`
		C *int64   `json:"c"`
		D *int64   `json:"d"`
		E *uint8   `json:"e"`
		F *uint8   `json:"f"`
		G *float64 `json:"g"`
		H *float64 `json:"h"`
		I []string `json:"i"`
		J []string `json:"j"`
		K []string `json:"k"`
		L bool     `json:"l"`
	}
	v := doc{A: &s, C: &n, E: &u, G: &fl, J: []string{}, K: []string{"a", "\n"}, L: true}
	b := append([]byte(nil), '{')
	b = StringPtr(Key(b, "a"), v.A)
	b = StringPtr(Key(b, "b"), v.B)
	b = IntPtr(Key(b, "c"), v.C)
	b = IntPtr(Key(b, "d"), v.D)
	b = UintPtr(Key(b, "e"), v.E)
	b = UintPtr(Key(b, "f"), v.F)
	b = FloatPtr(Key(b, "g"), v.G)
	b = FloatPtr(Key(b, "h"), v.H)
	b = Strings(Key(b, "i"), v.I)
	b = Strings(Key(b, "j"), v.J)
	b = Strings(Key(b, "k"), v.K)
	b = Bool(Key(b, "l"), v.L)
	b = append(b, '}')
	if got, want := string(b), marshal(t, v); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
