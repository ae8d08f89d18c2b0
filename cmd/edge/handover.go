package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

// A running edge is replaced without dropping a request (docs/operations.md,
// Restarts): on SIGUSR2 it starts its own binary again, handing it the
// listening socket (inherited as a file descriptor, so that no connection
// waiting to be accepted is lost, as it would be when one of two
// SO_REUSEPORT sockets closes) and a pipe. The new process loads its
// state, then writes to the pipe and starts accepting on the same socket;
// the old one then stops accepting, answers the requests it has with
// Connection: close, drains, writes its usage and exits. systemd's socket
// activation (LISTEN_FDS) hands a socket over the same way.

// Environment of a process started to take over a listener.
const (
	envListenFD = "EDGE_LISTEN_FD" // the inherited listening socket's descriptor
	envReadyFD  = "EDGE_READY_FD"  // the pipe to write to once ready to answer
)

// inheritedListener returns the listening socket handed over by the
// process this one replaces (EDGE_LISTEN_FD) or by systemd (LISTEN_FDS,
// LISTEN_PID), and the pipe to report readiness on (nil with systemd);
// nil, nil when there is none.
func inheritedListener() (net.Listener, *os.File, error) {
	fdText := os.Getenv(envListenFD)
	if fdText == "" && os.Getenv("LISTEN_FDS") == "1" && os.Getenv("LISTEN_PID") == strconv.Itoa(os.Getpid()) {
		fdText = "3" // SD_LISTEN_FDS_START
	}
	if fdText == "" {
		return nil, nil, nil
	}
	fd, err := strconv.Atoi(fdText)
	if err != nil || fd < 3 {
		return nil, nil, fmt.Errorf("inherited listener: descriptor %q", fdText)
	}
	f := os.NewFile(uintptr(fd), "listener")
	ln, err := net.FileListener(f)
	f.Close() // FileListener holds a duplicate
	if err != nil {
		return nil, nil, fmt.Errorf("inherited listener: %w", err)
	}
	var ready *os.File
	if r := os.Getenv(envReadyFD); r != "" {
		rfd, err := strconv.Atoi(r)
		if err != nil || rfd < 3 {
			ln.Close()
			return nil, nil, fmt.Errorf("readiness pipe: descriptor %q", r)
		}
		ready = os.NewFile(uintptr(rfd), "ready")
	}
	for _, v := range []string{envListenFD, envReadyFD, "LISTEN_FDS", "LISTEN_PID", "LISTEN_FDNAMES"} {
		os.Unsetenv(v) // not for a process this one starts in turn
	}
	return ln, ready, nil
}

// reportReady tells the process being replaced that this one answers.
func reportReady(ready *os.File) {
	if ready == nil {
		return
	}
	ready.Write([]byte{1})
	ready.Close()
}

// replaceOnUSR2 starts a new process of the same binary and arguments on
// each SIGUSR2, hands it ln, and calls handover once the new process is
// ready: this process then stops. A new process that fails or is not
// ready within wait is stopped, and this one goes on.
func replaceOnUSR2(ctx context.Context, ln net.Listener, wait time.Duration, handover func(), log *slog.Logger) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGUSR2)
	go func() {
		defer signal.Stop(ch)
		for {
			select {
			case <-ctx.Done():
				return
			case <-ch:
			}
			log.Info("SIGUSR2: starting a new process to take over the listener")
			pid, err := startSuccessor(ctx, ln, wait)
			if err != nil {
				log.Error("replacement failed; this process goes on", "err", err)
				continue
			}
			log.Info("the new process answers: stopping this one", "pid", pid)
			handover()
			return
		}
	}()
}

// startSuccessor starts this binary again with ln and a readiness pipe
// and waits until the new process reports ready, exits, or wait passes.
func startSuccessor(ctx context.Context, ln net.Listener, wait time.Duration) (int, error) {
	tl, ok := ln.(interface{ File() (*os.File, error) })
	if !ok {
		return 0, errors.New("the listener cannot be handed over")
	}
	lf, err := tl.File()
	if err != nil {
		return 0, fmt.Errorf("listener file: %w", err)
	}
	defer lf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("readiness pipe: %w", err)
	}
	defer r.Close()
	exe, err := os.Executable()
	if err != nil {
		w.Close()
		return 0, fmt.Errorf("own binary: %w", err)
	}
	cmd := exec.Command(exe, os.Args[1:]...)
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{lf, w} // descriptors 3 and 4
	cmd.Env = append(os.Environ(), envListenFD+"=3", envReadyFD+"=4")
	if err := cmd.Start(); err != nil {
		w.Close()
		return 0, fmt.Errorf("start %s: %w", exe, err)
	}
	w.Close() // the child holds its own end
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ready := make(chan bool, 1)
	go func() {
		var b [1]byte
		n, _ := r.Read(b[:])
		ready <- n == 1
	}()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case ok := <-ready:
		if ok {
			return cmd.Process.Pid, nil
		}
		cmd.Process.Signal(syscall.SIGTERM)
		return 0, fmt.Errorf("the new process (pid %d) closed its readiness pipe without being ready: %v", cmd.Process.Pid, <-exited)
	case err := <-exited:
		return 0, fmt.Errorf("the new process exited before it was ready: %v", err)
	case <-timer.C:
	case <-ctx.Done():
	}
	cmd.Process.Signal(syscall.SIGTERM)
	return 0, fmt.Errorf("the new process (pid %d) was not ready within %v", cmd.Process.Pid, wait)
}
