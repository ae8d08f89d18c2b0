// Package answer is the edge's encoded answers, their cache and the one
// place that sends them: an Answer is a response body with its weak ETag
// (and, when large, its memfd for sendfile), made once and shared by
// every request; the Cache keeps them bounded in bytes under keys built
// with Key; a route is a Handler that returns its Reply, and the
// Responder sends it (coding, validators and 304, Cache-Control, Vary)
// and tells the replay path what it may record.
package answer
