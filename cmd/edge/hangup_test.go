//go:build unix

package main

import (
	"context"
	"io"
	"log/slog"
	"syscall"
	"testing"
	"time"
)

// TestHangupReloads sends the process SIGHUP and checks that the full
// views job runs, once a signal.
func TestHangupReloads(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ran := make(chan string, 4)
	reloadOnHangup(ctx, func(name string) error { ran <- name; return nil }, slog.New(slog.NewTextHandler(io.Discard, nil)))
	for range 2 {
		if err := syscall.Kill(syscall.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
		select {
		case name := <-ran:
			if name != "views" {
				t.Fatalf("SIGHUP ran %q, want the views job", name)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("SIGHUP ran no job")
		}
	}
}
