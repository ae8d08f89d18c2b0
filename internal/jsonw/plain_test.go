package jsonw

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestPlain: Plain writes what encoding/json writes without HTML escaping,
// but \b and \f as \u0008 and \u000c, as the MCP SDK's encoder does; and
// every string reads back as itself (invalid UTF-8 as U+FFFD).
func TestPlain(t *testing.T) {
	for _, s := range []string{"", "plain", `quo"te`, `back\slash`, "new\nline\ttab\r", "\x00\x01\x1f\b\f", "ünïcødé ✓ 日本",
		"\u2028\u2029", "bad \xff utf8", `{"a":[1,"b"]}`, "</script><&>"} {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		w := strings.NewReplacer(`\b`, `\u0008`, `\f`, `\u000c`).Replace(strings.TrimSuffix(want.String(), "\n"))
		if got := string(Plain(nil, s)); got != w {
			t.Errorf("%q: %s, want %s", s, got, w)
		}
		var back string
		if err := json.Unmarshal(Plain(nil, s), &back); err != nil || back != strings.ToValidUTF8(s, "\ufffd") {
			t.Errorf("%q reads back as %q (%v)", s, back, err)
		}
	}
}
