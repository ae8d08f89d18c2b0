package mcp

import (
	"fmt"
	"strings"
)

// outputSchema returns a tool's output schema: an object with the
// top-level fields of the answer's schema in the OpenAPI description
// (component name, or either of two, "A|B"), each named without its
// shape ({}). An agent reads tools/list whole into its context before its
// first question, and the full shapes, a listing's repeated by every tool
// that lists listings, would be most of it. A result shows its own shape,
// and the OpenAPI description at /api/v1/openapi.json describes every
// field (docs/mcp.md, Output schemas).
func outputSchema(defs map[string]any, name string) (map[string]any, error) {
	if a, b, ok := strings.Cut(name, "|"); ok {
		sa, err := topLevel(defs, a)
		if err != nil {
			return nil, err
		}
		sb, err := topLevel(defs, b)
		if err != nil {
			return nil, err
		}
		// anyOf, not oneOf: an object of either shape may match both.
		return map[string]any{"type": "object", "anyOf": []any{sa, sb}}, nil
	}
	return topLevel(defs, name)
}

// topLevel returns component name as an object of its fields' names.
func topLevel(defs map[string]any, name string) (map[string]any, error) {
	s, ok := defs[name].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no schema %s", name)
	}
	props, _ := s["properties"].(map[string]any)
	if s["type"] != "object" || len(props) == 0 {
		return nil, fmt.Errorf("schema %s is not an object with fields", name)
	}
	fields := make(map[string]any, len(props))
	for field := range props {
		fields[field] = map[string]any{}
	}
	return map[string]any{"type": "object", "properties": fields}, nil
}
