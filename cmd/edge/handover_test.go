package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/chtest"
)

// keepAlive is a strict HTTP/1.1 client on one connection at a time: it
// never retries, so a request lost to a closed or reset connection is an
// error, as it is for wrk. It opens a new connection only after an
// answer that said Connection: close.
type keepAlive struct {
	addr string
	conn net.Conn
	r    *bufio.Reader
}

// get asks path and returns the status; an error is a failed request.
func (k *keepAlive) get(path string) (int, error) {
	if k.conn == nil {
		c, err := net.Dial("tcp", k.addr)
		if err != nil {
			return 0, err
		}
		k.conn, k.r = c, bufio.NewReader(c)
	}
	k.conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := fmt.Fprintf(k.conn, "GET %s HTTP/1.1\r\nHost: edge\r\n\r\n", path); err != nil {
		return 0, fmt.Errorf("write: %w", err)
	}
	resp, err := http.ReadResponse(k.r, nil)
	if err != nil {
		return 0, fmt.Errorf("read: %w", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, fmt.Errorf("body: %w", err)
	}
	resp.Body.Close()
	if resp.Close {
		k.conn.Close()
		k.conn = nil
	}
	return resp.StatusCode, nil
}

// TestReplaceUnderLoad replaces a running edge process with SIGUSR2 while
// keep-alive clients call it without pause: the new process
// takes the listening socket over, loads, and starts accepting; the old
// one stops accepting, closes each connection after its next answer,
// and exits. No request fails, none is refused, and the new process
// answers afterwards.
func TestReplaceUnderLoad(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg := srv.NewDatabase(t)
	t.Setenv("EDGE_CH_ADDR", cfg.Addr)
	t.Setenv("EDGE_CH_DATABASE", cfg.Database)
	ctx := context.Background()
	if code, _, errs := runCmd(t, ctx, "migrate"); code != 0 {
		t.Fatalf("migrate: %s", errs)
	}
	if code, _, errs := runCmd(t, ctx, "seed", "--listings", "300", "--days", "10", "--end", "2026-05-01"); code != 0 {
		t.Fatalf("seed: %s", errs)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	// The log goes to a file: a pipe would keep Wait waiting for the new
	// process, which inherits it.
	logFile, err := os.Create(t.TempDir() + "/edge.log")
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(os.Args[0], "serve", "--listen", addr, "--log-format", "json", "--cache-mb", "64",
		"--editions-schedule", "off", "--ranks-schedule", "off", "--exports-schedule", "off", "--drain-timeout", "2s",
		"--miss-wait", "10s") // the first misses of the new process wait their turns (the gate is not under test)
	cmd.Env = append(os.Environ(), envTestAsEdge+"=1", "EDGE_FAIR_USE_RATE=0",
		"EDGE_ANON_PER_MINUTE=1000000000", "EDGE_ANON_PER_DAY=1000000000000")
	lw := fileLog{logFile.Name()}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM)
		// The new process: found by the old one's log.
		if pid := successorPID(lw.String()); pid > 0 {
			if p, err := os.FindProcess(pid); err == nil {
				p.Signal(syscall.SIGTERM)
			}
		}
	}()
	waitFigures(t, addr)

	var ok, failed atomic.Int64
	var firstErr atomic.Value
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			k := &keepAlive{addr: addr}
			paths := []string{"/api/summary", "/api/v1/listings", "/api/extensions?platform=0", "/api/v1/tags"}
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				status, err := k.get(paths[(w+i)%len(paths)])
				if err == nil && status != 200 {
					err = fmt.Errorf("status %d", status)
				}
				if err != nil {
					failed.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					k.conn = nil
					continue
				}
				ok.Add(1)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	before := ok.Load()
	if err := cmd.Process.Signal(syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("the old process: %v\n%s", err, lw.String())
		}
	case <-time.After(90 * time.Second):
		t.Fatalf("the old process did not stop after SIGUSR2\n%s", lw.String())
	}
	during := ok.Load() - before
	time.Sleep(500 * time.Millisecond) // the new process alone
	close(stop)
	wg.Wait()
	if n := failed.Load(); n > 0 {
		t.Fatalf("%d of %d requests failed through the replacement; first: %v", n, n+ok.Load(), firstErr.Load())
	}
	pid := successorPID(lw.String())
	if pid <= 0 || pid == cmd.Process.Pid {
		t.Fatalf("no new process in the log:\n%s", lw.String())
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the new process %d is gone: %v", pid, err)
	}
	if a, err := (&keepAlive{addr: addr}).get("/api/summary"); err != nil || a != 200 {
		t.Fatalf("after the replacement: %d %v", a, err)
	}
	t.Logf("%d requests, none failed, %d of them while the old process handed over", ok.Load(), during)
}

// successorPID finds the new process's pid in the old one's JSON log.
func successorPID(log string) int {
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "the new process answers") {
			continue
		}
		if i := strings.Index(line, `"pid":`); i >= 0 {
			rest := line[i+len(`"pid":`):]
			end := strings.IndexAny(rest, ",}")
			if n, err := strconv.Atoi(strings.TrimSpace(rest[:max(end, 0)])); err == nil {
				return n
			}
		}
	}
	return 0
}

// waitFigures waits until the edge at addr has published its figures.
func waitFigures(t *testing.T, addr string) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if strings.Contains(string(body), `"figures":true`) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the edge never published its figures")
		}
	}
}

// fileLog reads the processes' log file.
type fileLog struct{ name string }

func (f fileLog) String() string {
	b, _ := os.ReadFile(f.name)
	return string(b)
}
