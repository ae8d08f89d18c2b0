//go:build !linux

package fleet

// atLowPriority runs f. Only Linux sets one thread's priority; elsewhere
// the whole state is written at the process's.
func atLowPriority(f func()) { f() }
