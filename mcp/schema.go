package mcp

import (
	"fmt"
	"strings"
)

// outputSchema returns a tool's output schema: an object whose title
// names the answer's schema in the OpenAPI description (component name,
// or either of two, "A|B", as anyOf). An agent reads tools/list whole into
// its context before its first question; the answers' shapes, even their
// top-level fields alone, would be the largest part of it, while a result
// shows its own shape and the OpenAPI description at /api/v1/openapi.json
// describes every field of the schema the title names (docs/mcp.md,
// Output schemas).
func outputSchema(defs map[string]any, name string) (map[string]any, error) {
	if a, b, ok := strings.Cut(name, "|"); ok {
		for _, n := range []string{a, b} {
			if err := objectSchema(defs, n); err != nil {
				return nil, err
			}
		}
		// anyOf, not oneOf: an object of either shape may match both.
		return map[string]any{"type": "object", "anyOf": []any{map[string]any{"title": a}, map[string]any{"title": b}}}, nil
	}
	if err := objectSchema(defs, name); err != nil {
		return nil, err
	}
	return map[string]any{"type": "object", "title": name}, nil
}

// objectSchema checks that component name is an object with fields.
func objectSchema(defs map[string]any, name string) error {
	s, ok := defs[name].(map[string]any)
	if !ok {
		return fmt.Errorf("no schema %s", name)
	}
	if props, _ := s["properties"].(map[string]any); s["type"] != "object" || len(props) == 0 {
		return fmt.Errorf("schema %s is not an object with fields", name)
	}
	return nil
}
