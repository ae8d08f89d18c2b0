//go:build unix && !linux

package chtest

import "syscall"

// procAttr runs the server in its own process group. Outside Linux there
// is no parent-death signal: a test process killed without cleaning up
// leaves the server running.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
