package v1

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/gofiber/fiber/v2"
	"go.yaml.in/yaml/v3"

	"github.com/edge-stats/edge/edge/answer"
)

// openapiYAML is the OpenAPI 3.1 description of /api/v1, written as YAML
// for people and served as JSON.
//
//go:embed openapi.yaml
var openapiYAML []byte

// openapiCacheControl lets clients and CDNs keep the description for an
// hour: it changes only with a new release.
const openapiCacheControl = "public, max-age=3600"

// OpenAPI returns the OpenAPI description of the API as JSON, keys in the
// order the YAML source gives them.
func OpenAPI() ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		return nil, fmt.Errorf("read openapi.yaml: %w", err)
	}
	var buf bytes.Buffer
	if err := writeJSON(&buf, &doc); err != nil {
		return nil, fmt.Errorf("convert openapi.yaml: %w", err)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, buf.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("convert openapi.yaml: %w", err)
	}
	return out.Bytes(), nil
}

// writeJSON writes the YAML node n as JSON, keeping the order of mapping
// keys and resolving aliases.
func writeJSON(buf *bytes.Buffer, n *yaml.Node) error {
	switch n.Kind {
	case yaml.DocumentNode:
		return writeJSON(buf, n.Content[0])
	case yaml.AliasNode:
		return writeJSON(buf, n.Alias)
	case yaml.MappingNode:
		buf.WriteByte('{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				buf.WriteByte(',')
			}
			k, _ := json.Marshal(n.Content[i].Value)
			buf.Write(k)
			buf.WriteByte(':')
			if err := writeJSON(buf, n.Content[i+1]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, c := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeJSON(buf, c); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		var v any
		if err := n.Decode(&v); err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("line %d: %w", n.Line, err)
		}
		buf.Write(b)
	default:
		return fmt.Errorf("line %d: unexpected YAML node kind %d", n.Line, n.Kind)
	}
	return nil
}

// getOpenAPI answers GET /api/v1/openapi.json. It needs no key and counts
// against no limit.
func (s *API) getOpenAPI(c *fiber.Ctx) (answer.Reply, error) {
	return answer.Reply{Answer: s.openapi, CacheControl: openapiCacheControl}, nil
}
