// Package edge is the HTTP server: a fiber app that answers every request
// from the published in-memory state (views), with problem+json errors
// (RFC 9457), health and readiness endpoints, and graceful shutdown. It
// computes no figure while a request waits.
package edge
