// Package document holds the documents the edge publishes, each once,
// with its codecs beside it: a listing (its JSON, and the legacy API's
// row), a change event (its JSON and its cursor), and the opaque cursors
// lists hand back. The versioned API, the legacy API, the pages, the
// webhooks and the tool server all write these values; none defines its
// own. Documents are made from the published state (package views and
// its rooms) and import nothing of the server above them.
package document

//go:generate go run github.com/edge-stats/edge/internal/jsonw/jsongen/cmd/jsongen -out documents_json.go Listing LegacyRow
