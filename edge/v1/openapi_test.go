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
