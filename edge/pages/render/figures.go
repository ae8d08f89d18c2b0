package render

import (
	"strconv"

	"github.com/edge-stats/edge/internal/numfmt"
)

// Figure is one figure of a page: its definition's name (an anchor of
// /definitions), a label, its value as the JSON document gives it (Raw;
// "" for null) and as a person reads it (Text), and, when it is null, why
// (Why).
type Figure struct {
	Definition string
	Label      string
	Raw        string
	Text       string
	Why        string
	Link       string // the page of the listings it counts, "" for none
}

// Every page writes its figures with the helpers below, so that a number,
// a change, a rating or a percent reads the same on every page.

// Int formats n for a person: 1234567 is "1,234,567" (package numfmt,
// which the API's notes use too).
func Int(n int64) string { return numfmt.Int(n) }

// Signed formats a change with its sign: "+1,234", "−56", "0".
func Signed(n int64) string {
	if n > 0 {
		return "+" + Int(n)
	}
	return Int(n)
}

// Stars formats a rating for a person: 4.3666 is "4.37 ★".
func Stars(r float64) string { return strconv.FormatFloat(r, 'f', 2, 64) + " ★" }

// SignedPercent formats a percent change with its sign and two decimals,
// the minus sign as Int writes it: "+12.50%", "−3.10%".
func SignedPercent(p float64) string {
	sign := "+"
	if p < 0 {
		sign, p = "−", -p
	}
	return sign + strconv.FormatFloat(p, 'f', 2, 64) + "%"
}

// IntFigure is the figure def of the integer v: null (no Raw, no Text)
// when v is nil.
func IntFigure(def string, v *int64) Figure {
	f := Figure{Definition: def}
	if v != nil {
		f.Raw, f.Text = strconv.FormatInt(*v, 10), Int(*v)
	}
	return f
}

// ChangeFigure is IntFigure for a change, written with its sign.
func ChangeFigure(def string, v *int64) Figure {
	f := IntFigure(def, v)
	if v != nil {
		f.Text = Signed(*v)
	}
	return f
}

// RatingFigure is the figure def of the rating v, written as Stars: null
// when v is nil.
func RatingFigure(def string, v *float64) Figure {
	f := Figure{Definition: def}
	if v != nil {
		f.Raw, f.Text = strconv.FormatFloat(*v, 'f', -1, 64), Stars(*v)
	}
	return f
}

// PercentFigure is the figure def of the percent change p, written as
// SignedPercent: null when p is nil (a change from 0).
func PercentFigure(def string, p *float64) Figure {
	f := Figure{Definition: def}
	if p != nil {
		f.Raw, f.Text = strconv.FormatFloat(*p, 'f', -1, 64), SignedPercent(*p)
	}
	return f
}

// Labelled returns f with its label, and why it is null when it is.
func (f Figure) Labelled(label, whyNull string) Figure {
	f.Label = label
	if f.Raw == "" {
		f.Why = whyNull
	}
	return f
}
