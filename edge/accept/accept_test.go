package accept

import (
	"regexp"
	"strings"
	"testing"
)

const (
	html = "text/html"
	json = "application/json"
	csv  = "text/csv"
)

func TestQuality(t *testing.T) {
	for _, c := range []struct {
		header string
		typ    string
		want   int
	}{
		{"", html, 1000},
		{"text/html", html, 1000},
		{"TEXT/HTML", html, 1000},
		{"Text/Html;Q=0.5", html, 500},
		{"text/htmlx", html, 0},
		{"text/htmlx", json, 0},
		{"text/html;q=0, application/json", html, 0},
		{"text/html;q=0, application/json", json, 1000},
		{"text/*;q=0.3, text/html;q=0.7, */*;q=0.1", html, 700},
		{"text/*;q=0.3, text/html;q=0.7, */*;q=0.1", csv, 300},
		{"text/*;q=0.3, text/html;q=0.7, */*;q=0.1", json, 100},
		{"text/html;q=0, */*", html, 0},                 // the most specific range wins, whatever its place
		{"*/*, text/html;q=0", html, 0},                 //
		{"text/html;q=0.2, text/html;q=0.9", html, 200}, // the first of equals
		{"text/html;level=1, text/*;q=0.4", html, 400},  // a parameter the edge's pages lack
		{"text/html;charset=UTF-8;q=0.8, text/html;q=0.1", html, 800},
		{`text/html;charset="utf-8"`, html, 1000},
		{`text/html;a="x,y;z";q=0.5, application/json;q=0.6`, json, 600}, // a quoted comma ends nothing
		{"text/html;q=0.5;ext=1;q=0.9", html, 500},                       // accept-ext after the weight
		{"text/html;q=1.5", html, 1000},                                  // invalid: ignored, so nothing is said
		{"text/html;q=1.5, application/json", html, 0},
		{"text/html;q=0.1234, application/json", html, 0},
		{`text/html;q="0.5", application/json`, html, 0},
		{"text/html ; q=0.5 ,application/json", html, 500},
		{"*/html, application/json", html, 0},
		{"text, application/json", html, 0},
		{"garbage", html, 1000},
		{",,", html, 1000},
		{"text/html;;q=0.3", html, 300},
		{"text/html;q=0.", html, 0},
		{"text/html;q=1.", html, 1000},
		{`text/html;a="unclosed, application/json`, json, 1000}, // one malformed element: nothing said
	} {
		if got := Quality([]byte(c.header), c.typ); got != c.want {
			t.Errorf("Quality(%q, %s) = %d, want %d", c.header, c.typ, got, c.want)
		}
		if got := reference(c.header, c.typ); got != c.want {
			t.Errorf("reference(%q, %s) = %d, want %d", c.header, c.typ, got, c.want)
		}
	}
}

func TestPrefers(t *testing.T) {
	for _, c := range []struct {
		header string
		want   bool // a page rather than JSON
	}{
		{"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8", true}, // a browser's
		{"TEXT/HTML", true},
		{"*/*", false}, // curl's: a tie is not a preference
		{"", false},
		{"text/html, application/json", false},
		{"text/html;q=0, application/json", false},
		{"text/htmlx", false},
		{"text/*", true},
		{"application/json, text/html;q=0.9", false},
	} {
		if got := Prefers([]byte(c.header), html, json); got != c.want {
			t.Errorf("Prefers(%q, html, json) = %v, want %v", c.header, got, c.want)
		}
	}
}

// TestNoAllocation: the parser runs on every request of a page route.
func TestNoAllocation(t *testing.T) {
	h := []byte(`text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,*/*;q=0.8;v=b3, text/plain;charset="utf-8"`)
	if n := testing.AllocsPerRun(100, func() { Prefers(h, html, json) }); n != 0 {
		t.Errorf("Prefers allocates %v times a call", n)
	}
}

func BenchmarkPrefers(b *testing.B) {
	for _, h := range []string{"", "*/*", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"} {
		b.Run(h, func(b *testing.B) {
			header := []byte(h)
			b.ReportAllocs()
			for b.Loop() {
				Prefers(header, html, json)
			}
		})
	}
}

// FuzzQuality checks Quality against reference, a plain reading of the
// same rules (regular expressions of RFC 9110's grammar), on any field
// and for every type the edge negotiates: the two agree (Prefers too),
// the weight is within 0 to 1000, and neither panics.
func FuzzQuality(f *testing.F) {
	for _, s := range []string{"", "*/*", "text/html", "TEXT/HTML;Q=0.5", "text/html;q=0, application/json", "text/htmlx",
		"text/*;q=0.3, text/html;q=0.7, */*;q=0.1", `text/html;a="x,\"y;z";q=0.5, application/json;q=0.6`,
		"text/html;charset=utf-8;level=1", "text/html;q=0.5;ext;q=1", "a/b;;;, ,c/d;q=1.000", `x/y;p="\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		for _, typ := range []string{html, json, csv, "text/event-stream"} {
			got, want := Quality([]byte(header), typ), reference(header, typ)
			if got != want || got < 0 || got > 1000 {
				t.Fatalf("Quality(%q, %s) = %d; the reference says %d", header, typ, got, want)
			}
		}
		qh, qj := reference(header, html), reference(header, json)
		if got := Prefers([]byte(header), html, json); got != (qh > 0 && qh > qj) {
			t.Fatalf("Prefers(%q, html, json) = %v; the reference weighs them %d and %d", header, got, qh, qj)
		}
	})
}

const reTchar = "[!#$%&'*+.^_`|~0-9A-Za-z-]"

var (
	reElement = regexp.MustCompile(`(?s)^[ \t]*(` + reTchar + `+)/(` + reTchar + `+)((?:[ \t]*;[ \t]*(?:` + reTchar + `+=(?:` + reTchar + `+|"(?:[^"\\]|\\.)*"))?)*)[ \t]*$`)
	reParam   = regexp.MustCompile(`(?s);[ \t]*(?:(` + reTchar + `+)=(` + reTchar + `+|"(?:[^"\\]|\\.)*"))?`)
	reQvalue  = regexp.MustCompile(`^(?:0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$`)
)

// reference is Quality written for reading, not speed.
func reference(header, mediaType string) int {
	typ, sub, _ := strings.Cut(mediaType, "/")
	best, bestSpec, valid := 0, -1, false
	for _, el := range splitElements(header) {
		m := reElement.FindStringSubmatch(el)
		if m == nil || (m[1] == "*" && m[2] != "*") {
			continue
		}
		q, params, foreign, ok, weighed := 1000, false, false, true, false
		for _, p := range reParam.FindAllStringSubmatch(m[3], -1) {
			name, value := p[1], p[2]
			switch {
			case name == "" || weighed:
			case strings.EqualFold(name, "q"):
				if !reQvalue.MatchString(value) { // a quoted weight too
					ok = false
				} else {
					q = int(parseMilli(value))
				}
				weighed = true
			case strings.EqualFold(name, "charset") && strings.EqualFold(unquote(value), "utf-8"):
				params = true
			default:
				foreign = true
			}
		}
		if !ok {
			continue
		}
		valid = true
		spec := -1
		switch {
		case foreign:
		case m[1] == "*":
			spec = 0
		case strings.EqualFold(m[1], typ) && m[2] == "*":
			spec = 2
		case strings.EqualFold(m[1], typ) && strings.EqualFold(m[2], sub):
			spec = 4
		}
		if spec >= 0 && params {
			spec++
		}
		if spec > bestSpec {
			best, bestSpec = q, spec
		}
	}
	if !valid {
		return 1000
	}
	return best
}

// splitElements splits a field at its commas outside quoted strings.
func splitElements(h string) []string {
	var out []string
	quoted, start := false, 0
	for i := 0; i < len(h); i++ {
		switch {
		case quoted && h[i] == '\\':
			i++
		case h[i] == '"':
			quoted = !quoted
		case h[i] == ',' && !quoted:
			out = append(out, h[start:i])
			start = i + 1
		}
	}
	return append(out, h[min(start, len(h)):])
}

// unquote removes a quoted string's quotes (its escapes kept).
func unquote(v string) string {
	if strings.HasPrefix(v, `"`) {
		return v[1 : len(v)-1]
	}
	return v
}

// parseMilli reads a valid qvalue in thousandths.
func parseMilli(v string) int {
	whole, frac, _ := strings.Cut(v, ".")
	n := 1000 * int(whole[0]-'0')
	for i, scale := 0, 100; i < len(frac); i, scale = i+1, scale/10 {
		n += int(frac[i]-'0') * scale
	}
	return n
}
