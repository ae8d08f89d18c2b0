package lowprio

import (
	"runtime"
	"syscall"
)

// Nice is the nice value Run's thread runs at.
const Nice = 19

// Run runs f on an OS thread of its own at the lowest CPU priority (nice
// 19) and returns when f does. f must do its work in its own goroutine:
// goroutines it starts run at the process's priority.
//
// The goroutine never unlocks its thread, so the Go runtime ends the
// thread with it (or, for the process's main thread, parks it for good)
// and the priority goes nowhere else; threads the runtime
// starts meanwhile are cloned from its template thread, not from a
// locked one, so they keep the process's priority.
func Run(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		// On failure (a sandbox that refuses it) f runs at the usual
		// priority, which is only slower for others.
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, syscall.Gettid(), Nice)
		f()
	}()
	<-done
}
