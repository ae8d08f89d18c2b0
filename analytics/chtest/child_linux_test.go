package chtest

import (
	"os/exec"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// TestChildOutlivesALockedThreadThatEnds: children started by StartChild
// from goroutines that locked their threads and returned (the Go runtime
// then ends each thread, as it does after each of package lowprio's
// runs) are still running: Linux sends the parent-death signal when the
// thread that started a child ends, and a ZooKeeper started that way died
// in the middle of a fleet test. Started with exec.Cmd.Start there, they
// are killed.
func TestChildOutlivesALockedThreadThatEnds(t *testing.T) {
	// Three: one may run on the process's first thread, which the runtime
	// parks for good instead of ending it.
	type child struct {
		cmd    *exec.Cmd
		waited <-chan error
		err    error
	}
	var children []child
	for range 3 {
		out := make(chan child, 1)
		go func() {
			runtime.LockOSThread() // never unlocked: the runtime ends the thread
			c := child{cmd: exec.Command("sleep", "60")}
			c.waited, c.err = StartChild(c.cmd)
			out <- c
		}()
		c := <-out
		if c.err != nil {
			t.Fatal(c.err)
		}
		children = append(children, c)
	}
	ended := make([]bool, len(children))
	defer func() {
		for i, c := range children {
			syscall.Kill(-c.cmd.Process.Pid, syscall.SIGKILL)
			if !ended[i] {
				<-c.waited
			}
		}
	}()
	// The threads have ended (or end in a moment): a child killed with
	// its thread ends within this wait; one that outlives it does not.
	time.Sleep(2 * time.Second)
	for i, c := range children {
		select {
		case err := <-c.waited:
			ended[i] = true
			t.Errorf("child %d ended with the thread that started it: %v", i, err)
		default:
		}
	}
}
