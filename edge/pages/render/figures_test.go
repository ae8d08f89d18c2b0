package render

import "testing"

func TestFigureHelpers(t *testing.T) {
	i := func(n int64) *int64 { return &n }
	f := func(x float64) *float64 { return &x }
	for _, c := range []struct {
		name string
		got  Figure
		want Figure
	}{
		{"int", IntFigure("size", i(1234567)), Figure{Definition: "size", Raw: "1234567", Text: "1,234,567"}},
		{"null int", IntFigure("size", nil), Figure{Definition: "size"}},
		{"negative int", IntFigure("size", i(-5)), Figure{Definition: "size", Raw: "-5", Text: "−5"}},
		{"rise", ChangeFigure("change", i(1200)), Figure{Definition: "change", Raw: "1200", Text: "+1,200"}},
		{"fall", ChangeFigure("change", i(-3)), Figure{Definition: "change", Raw: "-3", Text: "−3"}},
		{"no change", ChangeFigure("change", i(0)), Figure{Definition: "change", Raw: "0", Text: "0"}},
		{"rating", RatingFigure("rating", f(4.3666)), Figure{Definition: "rating", Raw: "4.3666", Text: "4.37 ★"}},
		{"null rating", RatingFigure("rating", nil), Figure{Definition: "rating"}},
		{"percent", PercentFigure("percent", f(12.5)), Figure{Definition: "percent", Raw: "12.5", Text: "+12.50%"}},
		{"negative percent", PercentFigure("percent", f(-3.1)), Figure{Definition: "percent", Raw: "-3.1", Text: "−3.10%"}},
		{"labelled, null", IntFigure("size", nil).Labelled("Size", "never read"), Figure{Definition: "size", Label: "Size", Why: "never read"}},
		{"labelled, a value", IntFigure("size", i(7)).Labelled("Size", "never read"), Figure{Definition: "size", Label: "Size", Raw: "7", Text: "7"}},
	} {
		if c.got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, c.got, c.want)
		}
	}
}
