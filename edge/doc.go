// Package edge wires the HTTP server: one fiber app that serves the
// versioned API (package v1), the legacy API (legacy), accounts (account)
// and the tool server (/mcp) from the published state, behind metrics,
// panic recovery and problem+json errors, with health and readiness
// endpoints; it keeps the key list and the day's usage in sync while it
// serves, and stops gracefully. It computes no figure while a request
// waits.
package edge
