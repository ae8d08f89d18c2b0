package fleet

import (
	"runtime"
	"syscall"
)

// lowestNice is the nice value of the thread that writes whole states.
const lowestNice = 19

// atLowPriority runs f on an OS thread of its own at the lowest CPU
// priority (nice 19), and returns when f does. A leader writes its whole
// state this way: on a busy host its requests, its deltas and the
// followers beside it come first, and the whole state, which only an
// edge that joins or fell behind takes, waits for spare CPU.
//
// The goroutine never unlocks its thread, so the Go runtime ends the
// thread with it and the priority goes nowhere else; threads the runtime
// starts meanwhile are cloned from its template thread, not from a
// locked one, so they keep the process's priority.
func atLowPriority(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		// On failure (a sandbox that refuses it) f runs at the usual
		// priority, which is only slower for others.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), lowestNice)
		f()
	}()
	<-done
}
