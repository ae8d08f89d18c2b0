// Package mcp is the agent tool server: the Model Context Protocol over
// Streamable HTTP (stateless, JSON responses) with the official Go SDK.
// Its sixteen tools are the API's reads (ToolNames): each one names a v1 path and query,
// has the edge answer it exactly as it answers the REST call (same
// validation, same cache, same cursors), and returns that answer as the
// tool's structured content and as JSON text. A REST error becomes a tool
// result with isError and the same detail.
package mcp
