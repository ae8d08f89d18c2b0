// Package transport is the edge's TCP connections: a listener whose
// accepted connections read and write by raw system calls, arm their
// deadlines only when a call must wait, and send large answers from sealed
// in-memory files with sendfile(2). On other systems than Linux (amd64,
// arm64), or with raw I/O turned off, connections are the standard
// library's and every answer is sent from memory: the bytes on the wire
// are the same either way.
//
// A raw connection may also answer requests before fasthttp reads them,
// through a Replayer (the replay path, package replay): it frames the
// requests it reads (Frame) to know where each one starts, and offers the
// Replayer each whole request at a request boundary.
//
// What each trick saves, and how it was found, is in bench/README.md,
// The cached hot path.
package transport
