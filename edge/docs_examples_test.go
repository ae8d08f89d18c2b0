package edge_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestDocsExamples runs every curl example of README.md and docs/ that
// calls the edge of `make run` (127.0.0.1:8080) against a test edge over
// a seeded ClickHouse, in the order of each page, and checks what it
// answers against what the page says: each example ends with a comment
// `# → <status> [field …]`, and the answer must have that status and, in
// its JSON body, every field named (a dotted path for nested ones). An
// example without that comment fails the test, so no example goes
// unchecked. Examples that call something else (Varnish on :6081) are
// counted and left to their own tests. Placeholders: `you@example.com`
// is an address of the page's own, and `edge_…` the key the page's
// previous example made.
func TestDocsExamples(t *testing.T) {
	h := start(t, seeded(t))
	if err := h.Jobs.RunNow("views"); err != nil {
		t.Fatal(err)
	}
	pages, _ := filepath.Glob("../docs/*.md")
	pages = append([]string{"../README.md"}, pages...)
	ran := 0
	for i, page := range pages {
		body, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		email := fmt.Sprintf("you+%d@example.com", i)
		key := ""
		for _, ex := range curlExamples(string(body)) {
			where := fmt.Sprintf("%s:%d", filepath.Base(page), ex.line)
			if !strings.Contains(ex.text, "127.0.0.1:8080") {
				t.Logf("%s: not an example of the edge (left to its own test): %.80s", where, ex.text)
				continue
			}
			if ex.want == "" {
				t.Errorf("%s: no `# → <status> [fields]` says what it answers: %.120s", where, ex.text)
				continue
			}
			text := strings.ReplaceAll(ex.text, "you@example.com", email)
			text = strings.ReplaceAll(text, "edge_…", key)
			req, err := curlRequest(text, h.Base)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("%s: %v", where, err)
				continue
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			ran++
			fields := strings.Fields(ex.want)
			if strconv.Itoa(resp.StatusCode) != fields[0] {
				t.Errorf("%s: %d, the page says %s: %.300s", where, resp.StatusCode, fields[0], got)
				continue
			}
			var doc any
			if len(fields) > 1 && json.Unmarshal(got, &doc) != nil {
				t.Errorf("%s: the answer is not JSON: %.200s", where, got)
				continue
			}
			for _, f := range fields[1:] {
				if !hasField(doc, f) {
					t.Errorf("%s: no field %s in the answer: %.300s", where, f, got)
				}
			}
			var made struct{ Key string }
			if json.Unmarshal(got, &made) == nil && strings.HasPrefix(made.Key, "edge_") {
				key = made.Key
			}
		}
	}
	if ran < 8 {
		t.Fatalf("only %d examples ran: the test no longer finds them", ran)
	}
	t.Logf("%d examples ran", ran)
}

// example is a curl command of a page's sh block, continuation lines
// joined, with what its comment says it answers.
type example struct {
	line int
	text string // the command, without its comment
	want string // "<status> [fields]", "" when the comment does not say
}

var expectation = regexp.MustCompile(`#\s*→\s*(\d{3}(?:[ \t]+[A-Za-z0-9_.]+)*)`)

// curlExamples returns the curl commands of the sh code blocks of a
// Markdown page.
func curlExamples(page string) []example {
	var out []example
	inBlock := false
	lines := strings.Split(page, "\n")
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "```") {
			inBlock = !inBlock && (strings.HasPrefix(l, "```sh") || strings.HasPrefix(l, "```bash"))
			continue
		}
		trimmed := strings.TrimSpace(l)
		if !inBlock || !strings.HasPrefix(trimmed, "curl ") {
			continue
		}
		ex := example{line: i + 1}
		cmd := trimmed
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		code, comment := splitComment(cmd)
		ex.text = code
		if m := expectation.FindStringSubmatch(comment); m != nil {
			ex.want = m[1]
		}
		out = append(out, ex)
	}
	return out
}

// splitComment splits a shell line at its first # outside quotes that
// starts a word.
func splitComment(s string) (code, comment string) {
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || unicode.IsSpace(rune(s[i-1]))):
			return strings.TrimSpace(s[:i]), s[i:]
		}
	}
	return strings.TrimSpace(s), ""
}

// shellWords splits a command as sh would: single quotes literal, double
// quotes with \", \\ and \$ escapes, backslash escapes outside quotes.
func shellWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	in := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unclosed ' in %q", s)
			}
			w.WriteString(string(rs[i+1 : j]))
			i, in = j, true
		case r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[j+1]) {
					j++
				}
				w.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, fmt.Errorf("unclosed \" in %q", s)
			}
			i, in = j, true
		case r == '\\' && i+1 < len(rs):
			i++
			w.WriteRune(rs[i])
			in = true
		case unicode.IsSpace(r):
			if in {
				words = append(words, w.String())
				w.Reset()
				in = false
			}
		default:
			w.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}

// curlRequest makes the request a curl command sends, to base instead of
// 127.0.0.1:8080. It knows the flags the docs use and refuses others, so
// that an example the test cannot read fails rather than passes.
func curlRequest(cmd, base string) (*http.Request, error) {
	args, err := shellWords(cmd)
	if err != nil {
		return nil, err
	}
	method, target, body := "", "", ""
	header := http.Header{}
	var user string
	for i := 1; i < len(args); i++ {
		a := args[i]
		next := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("%s needs a value", a)
			}
			i++
			return args[i], nil
		}
		var v string
		switch a {
		case "-s", "-S", "-sS", "-i", "--compressed", "-f", "--fail":
		case "-I", "--head":
			method = http.MethodHead
		case "-X", "--request":
			if method, err = next(); err != nil {
				return nil, err
			}
		case "-H", "--header":
			if v, err = next(); err != nil {
				return nil, err
			}
			name, value, _ := strings.Cut(v, ":")
			header.Add(strings.TrimSpace(name), strings.TrimSpace(value))
		case "-d", "--data", "--data-raw", "--data-binary":
			if body, err = next(); err != nil {
				return nil, err
			}
			if header.Get("Content-Type") == "" {
				header.Set("Content-Type", "application/x-www-form-urlencoded") // curl's, unless told
			}
		case "--json":
			if body, err = next(); err != nil {
				return nil, err
			}
			header.Set("Content-Type", "application/json")
			header.Set("Accept", "application/json")
		case "-u", "--user":
			if user, err = next(); err != nil {
				return nil, err
			}
		case "-o", "--output", "-D", "--dump-header", "-w", "--write-out":
			if _, err = next(); err != nil {
				return nil, err
			}
		default:
			if strings.HasPrefix(a, "-") {
				return nil, fmt.Errorf("a curl flag the test does not know: %s", a)
			}
			target = a
		}
	}
	if method == "" {
		method = http.MethodGet
		if body != "" {
			method = http.MethodPost
		}
	}
	target = strings.TrimPrefix(strings.TrimPrefix(target, "http://"), "127.0.0.1:8080")
	req, err := http.NewRequest(method, base+target, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	if user != "" {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(user)))
	}
	return req, nil
}

// hasField reports whether the JSON value doc has the dotted path.
func hasField(doc any, path string) bool {
	for name := range strings.SplitSeq(path, ".") {
		m, ok := doc.(map[string]any)
		if !ok {
			return false
		}
		if doc, ok = m[name]; !ok {
			return false
		}
	}
	return true
}
