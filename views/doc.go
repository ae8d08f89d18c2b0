// Package views holds the immutable in-memory state that the edge serves:
// the replica of every listing's current state and, built from it, every
// computed figure. It does no I/O. A new state is built off to the side and
// published with one atomic pointer swap (see Published), so readers never
// lock and never see a half-built state.
package views
