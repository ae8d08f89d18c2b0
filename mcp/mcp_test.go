package mcp

import (
	"context"
	stdjson "encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
)

func TestValidID(t *testing.T) {
	for id, ok := range map[string]bool{`1`: true, `-3`: true, `"a"`: true, `0`: true, `9007199254740992`: true,
		`1.5`: false, `1e3`: false, `-0`: false, `01`: false, `9007199254740993`: false, `123456789012345678901234567890`: false, ``: false, `null`: false, `{}`: false, `"x`: false, `true`: false} {
		if validID(stdjson.RawMessage(id)) != ok {
			t.Errorf("validID(%s) != %v", id, ok)
		}
	}
}

func TestEra(t *testing.T) {
	v := func(s string) stdjson.RawMessage { return stdjson.RawMessage(`"` + s + `"`) }
	modern := &requestMeta{ProtocolVersion: v("2026-07-28"), Capabilities: stdjson.RawMessage(`{}`)}
	headers := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	modernHeaders := headers("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "list_tags")
	for _, c := range []struct {
		name       string
		meta       *requestMeta
		header     func(string) string
		modern, ok bool
	}{
		{"no meta, no header", nil, headers(), false, true},
		{"2025 header", nil, headers("Mcp-Protocol-Version", "2025-06-18"), false, true},
		{"unknown header", nil, headers("Mcp-Protocol-Version", "2024-01-01"), false, false},
		{"modern", modern, modernHeaders, true, true},
		{"modern without Mcp-Name", modern, headers("Mcp-Protocol-Version", "2026-07-28", "Mcp-Method", "tools/call"), false, false},
		{"modern without capabilities", &requestMeta{ProtocolVersion: v("2026-07-28")}, modernHeaders, false, false},
		{"a future version", &requestMeta{ProtocolVersion: v("2027-01-01"), Capabilities: stdjson.RawMessage(`{}`)}, modernHeaders, false, false},
		{"old version in meta", &requestMeta{ProtocolVersion: v("2025-11-25")}, headers("Mcp-Protocol-Version", "2025-11-25"), false, true},
	} {
		modern, ok := era(c.meta, c.header, "list_tags")
		if modern != c.modern || ok != c.ok {
			t.Errorf("%s: modern %v ok %v, want %v %v", c.name, modern, ok, c.modern, c.ok)
		}
	}
}

func byToolName(name string) *tool {
	for i := range tools {
		if tools[i].name == name {
			return &tools[i]
		}
	}
	return nil
}

func TestToolRequests(t *testing.T) {
	for _, c := range []struct {
		tool string
		args args
		want string
	}{
		{"search_listings", args{"store": "edge", "limit": 5.0}, "/listings?limit=5&store=edge"},
		{"get_listing", args{"store": "firefox", "id": "a/../b"}, "/listings/firefox/a%2F..%2Fb?"},
		{"get_listing_history", args{"store": "apple", "id": "1", "days": 7.0}, "/listings/apple/1/history?days=7"},
		{"climbers", args{"store": "chrome"}, "/charts/chrome?chart=climbers"},
		{"climbers", args{"store": "chrome", "category": "Tools"}, "/charts/chrome?category=Tools&chart=climbers"},
		{"search_reviews", args{"q": "crash", "stars": "all"}, "/reviews/search?q=crash&stars=all"},
		{"search_reviews", args{"store": "firefox", "id": "x", "q": "crash"}, "/listings/firefox/x/reviews?q=crash"},
		{"tag_listings", args{"slug": "ad-blocker", "store": "edge"}, "/tags/ad-blocker/edge?"},
		{"search_listings", args{"limit": 5.0}, "/listings?limit=5"},
	} {
		tl := byToolName(c.tool)
		if err := tl.check(c.args); err != nil {
			t.Errorf("%s %v: %v", c.tool, c.args, err)
			continue
		}
		path, q := tl.request(c.args)
		if got := path + "?" + q.Encode(); got != c.want {
			t.Errorf("%s: %s, want %s", c.tool, got, c.want)
		}
	}
	for _, c := range []struct {
		tool string
		args args
		want string
	}{
		{"get_listing", args{"store": "edge"}, "id: required"},
		{"get_listing", args{"store": "edge", "id": "x", "colour": "red"}, "colour: not an argument of get_listing; use id, store."},
		{"list_tags", args{"x": 1.0}, "x: list_tags takes no arguments."},
		{"search_reviews", args{"id": "x"}, "store: required with id"},
		{"search_reviews", args{"store": "edge"}, "q: required without id"},
		// Each argument has its schema's JSON type: no string for an
		// integer, no fraction, no number for a string.
		{"search_listings", args{"limit": "5"}, `limit: must be a JSON integer such as 5, not the string "5"`},
		{"search_listings", args{"limit": "abc"}, `limit: must be a JSON integer such as 5, not the string "abc"`},
		{"search_listings", args{"limit": 2.5}, "limit: must be a JSON integer such as 5, not the number 2.5"},
		{"search_listings", args{"limit": true}, "limit: must be a JSON integer such as 5, not a boolean"},
		{"search_listings", args{"limit": []any{5.0}}, "limit: must be a JSON integer such as 5, not an array"},
		{"get_listing_history", args{"store": "apple", "id": "1", "days": map[string]any{}}, "days: must be a JSON integer such as 5, not an object"},
		{"get_listing", args{"store": "apple", "id": 284882215.0}, "id: must be a JSON string, not the number 2.84882215e+08"},
		{"get_listing", args{"store": true, "id": "x"}, "store: must be a JSON string, not a boolean"},
	} {
		err := byToolName(c.tool).check(c.args)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s %v: %v, want %q", c.tool, c.args, err, c.want)
		}
	}
}

func TestOutputSchemas(t *testing.T) {
	openapi := []byte(`{"components":{"schemas":{
		"A":{"type":"object","description":"An A.","properties":{"b":{"$ref":"#/components/schemas/B"},"description":{"type":"string","example":"x"}}},
		"B":{"type":"object","properties":{"c":{"$ref":"#/components/schemas/C"}}},
		"C":{"type":"string","description":"A C."},
		"D":{"type":"string"}}}}`)
	defs, err := schemaDefs(openapi)
	if err != nil {
		t.Fatal(err)
	}
	// An object named by its component, and nothing of the component's
	// fields, prose or references.
	s, err := outputSchema(defs, "A")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := stdjson.Marshal(s)
	if want := `{"title":"A","type":"object"}`; string(b) != want {
		t.Fatalf("schema\n%s\nwant\n%s", b, want)
	}
	s, err = outputSchema(defs, "A|B")
	b, _ = stdjson.Marshal(s)
	if want := `{"anyOf":[{"title":"A"},{"title":"B"}],"type":"object"}`; err != nil || string(b) != want {
		t.Fatalf("either: %s %v, want %s", b, err, want)
	}
	for _, name := range []string{"E", "C", "A|D", "E|A"} {
		if _, err := outputSchema(defs, name); err == nil {
			t.Errorf("%s: an unknown schema, or one that is not an object, was accepted", name)
		}
	}
	if _, err := schemaDefs([]byte(`{}`)); err == nil {
		t.Fatal("a description without schemas was accepted")
	}
	for _, tl := range tools {
		if len(tl.description) < 40 || tl.output == "" {
			t.Errorf("tool %s lacks a description or output", tl.name)
		}
		for name, arg := range tl.args {
			if d, _ := arg["description"].(string); (d == "" && !subject(tl, name)) || arg["type"] == nil {
				t.Errorf("tool %s argument %s lacks a type or description", tl.name, name)
			}
		}
	}
}

// TestNullArgumentIsAbsent: an argument sent as null is left out, as if
// not sent, rather than read as an empty value.
func TestNullArgumentIsAbsent(t *testing.T) {
	var asked string
	answer := func(_ context.Context, path string, q url.Values) (int, []byte, bool) {
		asked = path + "?" + q.Encode()
		return 200, []byte(`{}`), true
	}
	body, detail, _ := byToolName("search_listings").call(context.Background(), answer, []byte(`{"store":null,"limit":5}`))
	if body == nil || asked != "/listings?limit=5" {
		t.Fatalf("asked %q (detail %q), want /listings?limit=5", asked, detail)
	}
}

// subject reports whether argument name of tl is the store or id of the
// one listing or store it reads, required, and a store of the five: such
// an argument needs no description.
func subject(tl tool, name string) bool {
	if !slices.Contains(tl.required, name) {
		return false
	}
	switch name {
	case "id":
		return slices.Contains(tl.required, "store")
	case "store":
		return slices.Equal(tl.args[name]["enum"].([]any), stores)
	}
	return false
}
