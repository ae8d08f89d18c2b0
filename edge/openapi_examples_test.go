package edge_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// updateExamples rewrites the OpenAPI description's answer examples from
// the demo data (checkAnswerExamples): go test -run
// TestDreddReplaysTheDescription ./edge/ -update-openapi-examples
var updateExamples = flag.Bool("update-openapi-examples", false,
	"rewrite edge/v1/openapi.yaml's answer examples from the demo data's answers")

// openapiSource is the OpenAPI description's source, from this package.
const openapiSource = "v1/openapi.yaml"

// checkAnswerExamples checks, on h (holding the demo data, as
// TestDreddReplaysTheDescription has it), that the example of each data
// answer (a 200 of a GET under /api/v1, as JSON or CSV) is what the edge
// answers to the request its path's and required parameters' examples
// make (with key): the example's keys with the answer's values, each
// array as long as the example's (or the answer's, when shorter), a
// CSV's first lines. So the listings, names, figures and days a new user
// reads in the description are those their own demo shows. The stream's
// example (a stream has no end to compare) and the description's own are
// left out. With -update-openapi-examples it writes them instead.
func checkAnswerExamples(t *testing.T, h *harness, key string) {
	src, err := os.ReadFile(openapiSource)
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatal(err)
	}
	root := doc.Content[0]
	paths := mapValue(root, "paths")
	var edits []exampleEdit
	checked := 0
	for i := 0; i+1 < len(paths.Content); i += 2 {
		path, item := paths.Content[i].Value, paths.Content[i+1]
		if mapValue(item, "servers") != nil || path == "/openapi.json" || path == "/events/stream" {
			continue // the account's routes, at the root; the description; the stream
		}
		op := mapValue(item, "get")
		if op == nil {
			continue
		}
		content := mapValue(mapValue(mapValue(op, "responses"), "200"), "content")
		if content == nil {
			continue
		}
		target := exampleTarget(t, root, path, item, op)
		for j := 0; j+1 < len(content.Content); j += 2 {
			media, body := content.Content[j].Value, content.Content[j+1]
			exKey, ex := mapEntry(body, "example")
			if ex == nil || (media != "application/json" && media != "text/csv") {
				continue
			}
			req, err := http.NewRequest("GET", h.Base+target, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Accept", media)
			req.Header.Set("Authorization", "Bearer "+key)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			var live bytes.Buffer
			_, err = live.ReadFrom(resp.Body)
			resp.Body.Close()
			if err != nil || resp.StatusCode != 200 {
				t.Errorf("GET %s (%s), the example's request: %d %v %.300s", target, media, resp.StatusCode, err, live.Bytes())
				continue
			}
			var want *yaml.Node
			if media == "text/csv" {
				want = csvLike(t, ex, live.String())
			} else {
				var v yaml.Node
				if err := yaml.Unmarshal(live.Bytes(), &v); err != nil || v.Kind != yaml.DocumentNode {
					t.Fatalf("GET %s: %v", target, err)
				}
				want = shapedLike(ex, v.Content[0])
			}
			checked++
			if !sameValue(t, ex, want) {
				if !*updateExamples {
					got, _ := json.Marshal(decoded(t, ex))
					live, _ := json.Marshal(decoded(t, want))
					t.Errorf("GET %s (%s): the example is not the demo data's answer (run with -update-openapi-examples to write it):\nexample %.600s\nanswer  %.600s",
						path, media, got, live)
				}
				edits = append(edits, exampleEdit{key: exKey, value: ex, with: want})
			}
		}
	}
	if checked < 25 {
		t.Errorf("only %d answer examples checked", checked)
	}
	if *updateExamples && len(edits) > 0 {
		out := rewriteExamples(t, src, edits)
		if err := os.WriteFile(openapiSource, out, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("rewrote %d examples of %s", len(edits), openapiSource)
	}
}

// exampleTarget is the address the examples of op's parameters make:
// its path parameters' examples in path, and its required query
// parameters', under /api/v1.
func exampleTarget(t *testing.T, root *yaml.Node, path string, item, op *yaml.Node) string {
	t.Helper()
	var params []*yaml.Node
	for _, list := range []*yaml.Node{mapValue(item, "parameters"), mapValue(op, "parameters")} {
		if list != nil {
			params = append(params, list.Content...)
		}
	}
	query := []string{}
	for _, p := range params {
		if ref := mapValue(p, "$ref"); ref != nil {
			p = mapValue(mapValue(mapValue(root, "components"), "parameters"), strings.TrimPrefix(ref.Value, "#/components/parameters/"))
		}
		name, in, ex := mapValue(p, "name"), mapValue(p, "in"), mapValue(p, "example")
		if name == nil || in == nil {
			t.Fatalf("%s: a parameter without name or in", path)
		}
		required := mapValue(p, "required") != nil && mapValue(p, "required").Value == "true"
		switch {
		case in.Value == "path" && ex == nil:
			t.Fatalf("%s: path parameter %s has no example", path, name.Value)
		case in.Value == "path":
			path = strings.ReplaceAll(path, "{"+name.Value+"}", ex.Value)
		case in.Value == "query" && required && ex == nil:
			t.Fatalf("%s: required parameter %s has no example", path, name.Value)
		case in.Value == "query" && required:
			query = append(query, name.Value+"="+ex.Value)
		}
	}
	target := "/api/v1" + path
	if len(query) > 0 {
		target += "?" + strings.Join(query, "&")
	}
	return target
}

// shapedLike is the answer v (read as YAML, which keeps its keys'
// order) in the example ex's shape: ex's keys, in its order, with v's
// values (a key v lacks is left out), each array cut to ex's length; what
// ex does not show (a null in ex) in v's order; each list and mapping in
// ex's style.
func shapedLike(ex, v *yaml.Node) *yaml.Node {
	out := *v
	out.Content = nil
	switch {
	case v.Kind == yaml.MappingNode && ex.Kind == yaml.MappingNode:
		out.Style = ex.Style
		for i := 0; i+1 < len(ex.Content); i += 2 {
			if k, x := mapEntry(v, ex.Content[i].Value); x != nil {
				out.Content = append(out.Content, plain(k), shapedLike(ex.Content[i+1], x))
			}
		}
	case v.Kind == yaml.SequenceNode && ex.Kind == yaml.SequenceNode:
		out.Style = ex.Style
		for i := range min(len(ex.Content), len(v.Content)) {
			out.Content = append(out.Content, shapedLike(ex.Content[i], v.Content[i]))
		}
	default:
		out = *plain(v)
	}
	return &out
}

// plain is n without the style JSON gave it, as the description writes
// its examples: lists and mappings as blocks ([] and {} when empty),
// quotes only where needed, single ones.
func plain(n *yaml.Node) *yaml.Node {
	out := *n
	out.Content = make([]*yaml.Node, len(n.Content))
	for i, c := range n.Content {
		out.Content[i] = plain(c)
	}
	out.Style = 0
	switch {
	case out.Kind == yaml.ScalarNode:
		quoteAsTheFileDoes(&out)
	case len(out.Content) == 0:
		out.Style = yaml.FlowStyle
	}
	return &out
}

// quoteAsTheFileDoes gives the strings in n that need quotes (a date, a
// number's digits) single ones, as the description's examples have them.
func quoteAsTheFileDoes(n *yaml.Node) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" || strings.ContainsAny(n.Value, "\n\r\t") {
		return
	}
	if out, err := yaml.Marshal(n.Value); err == nil && out[0] == '"' {
		n.Style = yaml.SingleQuotedStyle
	}
}

// csvLike is the CSV answer live cut to the example ex's count of lines,
// with a byte-order mark only when ex has one.
func csvLike(t *testing.T, ex *yaml.Node, live string) *yaml.Node {
	t.Helper()
	if !strings.HasPrefix(ex.Value, "\ufeff") {
		live = strings.TrimPrefix(live, "\ufeff")
	}
	lines := strings.SplitAfter(live, "\r\n")
	n := min(strings.Count(ex.Value, "\r\n"), len(lines))
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: strings.Join(lines[:n], "")}
}

// sameValue reports whether a and b hold the same value, read as JSON.
func sameValue(t *testing.T, a, b *yaml.Node) bool {
	return reflect.DeepEqual(decoded(t, a), decoded(t, b))
}

// decoded is n's value as JSON reads it (every number a float64).
func decoded(t *testing.T, n *yaml.Node) any {
	t.Helper()
	var v any
	if err := n.Decode(&v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// mapEntry returns the key and value nodes of key in the mapping m (nil
// when m is nil or has no key).
func mapEntry(m *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			v := m.Content[i+1]
			if v.Kind == yaml.AliasNode {
				v = v.Alias
			}
			return m.Content[i], v
		}
	}
	return nil, nil
}

func mapValue(m *yaml.Node, key string) *yaml.Node {
	_, v := mapEntry(m, key)
	return v
}

// exampleEdit is an example to write again: the value of key, with.
type exampleEdit struct {
	key, value, with *yaml.Node
}

// rewriteExamples writes each edit's example into src in place of the
// one there, leaving every other line as it is: a value on its key's line
// (flow style, or a quoted CSV) as one line of JSON, a block one as YAML
// indented under its key.
func rewriteExamples(t *testing.T, src []byte, edits []exampleEdit) []byte {
	t.Helper()
	lines := strings.Split(string(src), "\n")
	slices.SortFunc(edits, func(a, b exampleEdit) int { return b.key.Line - a.key.Line }) // from the end: lines before stay where they are
	for _, e := range edits {
		at := e.key.Line - 1
		indent := e.key.Column - 1
		end := at + 1 // the first line after the value
		for end < len(lines) {
			l := lines[end]
			trimmed := strings.TrimLeft(l, " ")
			ind := len(l) - len(trimmed)
			if trimmed != "" && (ind < indent || ind == indent && !(e.value.Kind == yaml.SequenceNode && strings.HasPrefix(trimmed, "-"))) {
				break
			}
			end++
		}
		if e.value.Line == e.key.Line {
			// On the key's line, and maybe a few more (a flow value):
			// as one line of JSON, which YAML reads.
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(decoded(t, e.with)); err != nil {
				t.Fatal(err)
			}
			if e.with.Kind == yaml.MappingNode {
				buf.Reset()
				writeFlowJSON(t, &buf, e.with)
				buf.WriteByte('\n')
			}
			line := strings.Repeat(" ", indent) + "example: " + strings.TrimSuffix(buf.String(), "\n")
			lines = slices.Replace(lines, at, end, line)
			continue
		}
		var buf bytes.Buffer
		enc := yaml.NewEncoder(&buf)
		enc.SetIndent(2)
		enc.CompactSeqIndent() // "- " under its key, as the description writes a list
		if err := enc.Encode(e.with); err != nil {
			t.Fatal(err)
		}
		block := []string{lines[at]}
		for _, l := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			block = append(block, strings.Repeat(" ", indent+2)+l)
		}
		lines = slices.Replace(lines, at, end, block...)
	}
	return []byte(strings.Join(lines, "\n"))
}

// writeFlowJSON writes the mapping n as JSON in its keys' order.
func writeFlowJSON(t *testing.T, buf *bytes.Buffer, n *yaml.Node) {
	t.Helper()
	buf.WriteByte('{')
	for i := 0; i+1 < len(n.Content); i += 2 {
		if i > 0 {
			buf.WriteString(", ")
		}
		k, _ := json.Marshal(n.Content[i].Value)
		var v bytes.Buffer
		enc := json.NewEncoder(&v)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(decoded(t, n.Content[i+1])); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(buf, "%s: %s", k, strings.TrimSuffix(v.String(), "\n"))
	}
	buf.WriteByte('}')
}
