// Package jsonwtest holds what the tests of JSON appended by package
// jsonw (its own, and its users') share: the comparison with
// encoding/json, and a text that meets every escape.
package jsonwtest

import (
	"encoding/json"
	"testing"

	"github.com/edge-stats/edge/internal/jsonw"
)

// OddText is text that every escape of encoding/json meets: quotes,
// backslashes, HTML, control characters, U+2028 and U+2029, invalid
// UTF-8 and characters of several bytes.
const OddText = "<b>\"A&B\"</b>\\ \n\t\x01 \u2028\u2029 \xff\xc3 ü 😀"

// Check fails t unless got's AppendJSON writes the bytes that
// encoding/json.Marshal writes for want.
func Check(t testing.TB, what string, want any, got jsonw.Appender) {
	t.Helper()
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	if g := got.AppendJSON(nil); string(g) != string(w) {
		t.Fatalf("%s:\ngot  %s\nwant %s", what, g, w)
	}
}

// CheckSelf is Check of v against itself: its AppendJSON against its
// encoding/json encoding.
func CheckSelf(t testing.TB, what string, v jsonw.Appender) {
	t.Helper()
	Check(t, what, v, v)
}
