// Package lowprio runs an edge's background work at the lowest CPU
// priority: work whose result can wait (the answers encoded at the best
// level before anyone asks) yields to the requests, and to a fleet's
// builds on the same host. On a busy host such work is starved: nothing
// may wait for it long (a leader's whole state, which a joining edge
// waits for, was tried here and starved).
package lowprio
