// Package answer is the edge's encoded answers and their cache: an Answer
// is a response body with its weak ETag (and, when large, its memfd for
// sendfile), made once and shared by every request; the Cache keeps them
// bounded in bytes under keys built with Key; Send writes one with its
// ETag and Cache-Control, or 304 when the client's copy is current.
package answer
