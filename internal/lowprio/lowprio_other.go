//go:build !linux

package lowprio

// Nice is the nice value Run's thread runs at on Linux.
const Nice = 19

// Run runs f. Only Linux sets one thread's priority; elsewhere the work
// runs at the process's.
func Run(f func()) { f() }
