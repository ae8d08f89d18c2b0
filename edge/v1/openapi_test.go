package v1

import (
	"encoding/json"
	"strings"
	"testing"
)

// schemaKeywords are the keywords a schema object of the description may
// use (JSON Schema 2020-12 as OpenAPI 3.1 takes it).
var schemaKeywords = map[string]bool{
	"$ref": true, "$defs": true, "type": true, "description": true, "title": true, "properties": true, "required": true,
	"items": true, "prefixItems": true, "enum": true, "const": true, "minimum": true, "maximum": true,
	"exclusiveMinimum": true, "exclusiveMaximum": true, "format": true, "pattern": true, "minLength": true,
	"maxLength": true, "minItems": true, "maxItems": true, "uniqueItems": true, "oneOf": true, "anyOf": true,
	"allOf": true, "not": true, "additionalProperties": true, "default": true, "examples": true, "example": true,
	"deprecated": true, "readOnly": true, "contentMediaType": true, "propertyNames": true,
	// The definition of the figure a field carries (/api/v1/definitions).
	"x-definition": true,
}

// TestOpenAPIHasNoNullOrUnknownKeyword fails on a null value anywhere in
// the served description, and on a keyword no schema has. Both are what a
// YAML flow mapping makes of an unquoted description with a comma in it:
// the text is cut at the comma and its rest becomes a key with a null
// value, which validators ignore and readers see as a truncated sentence.
func TestOpenAPIHasNoNullOrUnknownKeyword(t *testing.T) {
	spec, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := 0
	var walk func(v any, path string, schema bool)
	walk = func(v any, path string, schema bool) {
		switch x := v.(type) {
		case nil:
			t.Errorf("%s is null", path)
		case []any:
			for i, e := range x {
				walk(e, path+"/"+itoa(i), schema)
			}
		case map[string]any:
			if schema {
				schemas++
			}
			for k, e := range x {
				p := path + "/" + k
				if schema && !schemaKeywords[k] {
					t.Errorf("%s: %q is not a schema keyword", path, k)
				}
				switch {
				case schema && (k == "properties" || k == "$defs"):
					for name, s := range e.(map[string]any) {
						walk(s, p+"/"+name, true)
					}
				case schema && (k == "items" || k == "not" || k == "additionalProperties" || k == "propertyNames"):
					walk(e, p, true)
				case schema && (k == "oneOf" || k == "anyOf" || k == "allOf" || k == "prefixItems"):
					walk(e, p, true)
				case schema && (k == "enum" || k == "default" || k == "examples" || k == "example" || k == "const"):
					// values, where null is one a nullable field may take

				case !schema && (k == "example" || k == "examples"):
					// a parameter's or a media type's example: values, as in a schema

				case !schema && k == "schemas" && strings.HasSuffix(path, "/components"):
					for name, s := range e.(map[string]any) {
						walk(s, p+"/"+name, true)
					}
				case !schema && k == "schema":
					walk(e, p, true)
				default:
					walk(e, p, false)
				}
			}
		}
	}
	walk(doc, "", false)
	if schemas < 100 {
		t.Fatalf("only %d schema objects walked: the test no longer finds them", schemas)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestOpenAPIGivesToolsWhatTheyNeed checks what example-driven tools
// (Dredd, Prism, client generators' mocks) need of the description and
// what the server always sends: every operation declares its 405, every
// parameter and request body has an example, every response with a body
// an example in each media type (a file's bytes excepted), every 429 and
// 503 a required Retry-After, and every figure answer of /api/v1 its
// required Cache-Control, Vary and RateLimit headers.
func TestOpenAPIGivesToolsWhatTheyNeed(t *testing.T) {
	spec, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(spec, &doc); err != nil {
		t.Fatal(err)
	}
	// resolve follows a local $ref.
	resolve := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		for m != nil && m["$ref"] != nil {
			var cur any = doc
			for _, k := range strings.Split(strings.TrimPrefix(m["$ref"].(string), "#/"), "/") {
				cur = cur.(map[string]any)[strings.NewReplacer("~1", "/", "~0", "~").Replace(k)]
			}
			m, _ = cur.(map[string]any)
		}
		return m
	}
	examples := func(where string, content any) {
		for media, mt := range resolve(content) {
			m := mt.(map[string]any)
			schema := resolve(m["schema"])
			if m["example"] == nil && m["examples"] == nil && schema["format"] != "binary" {
				t.Errorf("%s %s: no example", where, media)
			}
		}
	}
	ops := 0
	for path, item := range doc["paths"].(map[string]any) {
		for method, raw := range item.(map[string]any) {
			if method == "servers" {
				continue
			}
			ops++
			op := raw.(map[string]any)
			where := method + " " + path
			params, _ := op["parameters"].([]any)
			for _, p := range params {
				if prm := resolve(p); prm["example"] == nil {
					t.Errorf("%s: parameter %v has no example", where, prm["name"])
				}
			}
			if body := resolve(op["requestBody"]); body != nil {
				examples(where+" request", body["content"])
			}
			responses := op["responses"].(map[string]any)
			if responses["405"] == nil {
				t.Errorf("%s: no 405", where)
			}
			for status, r := range responses {
				resp := resolve(r)
				examples(where+" "+status, resp["content"])
				headers, _ := resp["headers"].(map[string]any)
				required := func(names ...string) {
					for _, n := range names {
						if h := resolve(headers[n]); h == nil || h["required"] != true {
							t.Errorf("%s %s: %s is not a required header", where, status, n)
						}
					}
				}
				switch {
				case status == "429" || status == "503":
					required("Retry-After")
				case status == "405":
					required("Allow")
				case status == "200" && strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "/account") &&
					!strings.HasPrefix(path, "/exports/") && path != "/events/stream" && path != "/openapi.json" && path != "/definitions":
					required("Cache-Control", "Vary", "Link", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset", "RateLimit-Policy")
				}
			}
		}
	}
	if ops != 40 {
		t.Errorf("%d operations walked, want 40", ops)
	}
}
