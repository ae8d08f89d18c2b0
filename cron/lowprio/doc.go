// Package lowprio runs an edge's background work at the lowest CPU
// priority: work whose result can wait (a leader's whole state for the
// fleet, the answers encoded at the best level before anyone asks) yields
// to the requests, and to the followers and builds on the same host. On a
// busy host such work is starved: a stop must not wait for it long.
package lowprio
