package lowprio

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// threadNice returns the nice value of the calling goroutine's thread,
// from /proc (field 19 of its stat, after the command's parentheses).
func threadNice(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile("/proc/thread-self/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	n, err := strconv.Atoi(fields[16]) // field 19 of stat; fields here start at field 3
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRunsAtTheLowestPriority(t *testing.T) {
	runtime.LockOSThread()
	base := threadNice(t)
	runtime.UnlockOSThread()
	if base == Nice {
		t.Skipf("the process already runs at nice %d", base)
	}
	var inside int
	Run(func() { inside = threadNice(t) })
	if inside != Nice {
		t.Fatalf("f ran at nice %d, want %d", inside, Nice)
	}
	// The thread ended with its goroutine: no other goroutine runs at
	// that priority, on a thread of its own or on any of the runtime's.
	for range 4 * runtime.GOMAXPROCS(0) {
		got := make(chan int)
		go func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			got <- threadNice(t)
		}()
		if n := <-got; n != base {
			t.Fatalf("a thread after Run runs at nice %d, want the process's %d", n, base)
		}
	}
	var tid int
	Run(func() { tid = syscall.Gettid() })
	if tid == os.Getpid() {
		// The process's main thread cannot end: the runtime parks it for
		// good instead, and it runs nothing again.
		return
	}
	// The runtime ends the thread just after the goroutine: give it a
	// moment.
	for try := 0; ; try++ {
		_, err := os.Stat("/proc/self/task/" + strconv.Itoa(tid))
		if os.IsNotExist(err) {
			break
		}
		if try == 500 {
			t.Fatalf("Run's thread %d still exists (%v)", tid, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
