package chtest

import "syscall"

// procAttr runs the server in its own process group, killed with the test
// process should that die without cleaning up.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
