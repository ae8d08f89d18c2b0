package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/chtest"
)

var srv *chtest.Server

func TestMain(m *testing.M) { chtest.Main(m, &srv) }

func runCmd(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestHelpAndUsage(t *testing.T) {
	ctx := context.Background()
	if code, out, _ := runCmd(t, ctx, "--help"); code != 0 || !strings.Contains(out, "serve") || !strings.Contains(out, "seed") {
		t.Errorf("--help: %d %q", code, out)
	}
	if code, _, _ := runCmd(t, ctx); code != 2 {
		t.Errorf("no command: exit %d, want 2", code)
	}
	if code, _, errs := runCmd(t, ctx, "frobnicate"); code != 2 || !strings.Contains(errs, "unknown command") {
		t.Errorf("unknown command: %d %q", code, errs)
	}
	for _, sub := range []string{"serve", "migrate", "seed"} {
		code, _, errs := runCmd(t, ctx, sub, "--help")
		if code != 0 || !strings.Contains(errs, "EDGE_CH_ADDR") || !strings.Contains(errs, "-ch-password") {
			t.Errorf("%s --help: %d %q", sub, code, errs)
		}
	}
	t.Setenv("EDGE_CH_PASSWORD", "s3cret-value")
	if _, _, errs := runCmd(t, ctx, "serve", "--help"); strings.Contains(errs, "s3cret-value") {
		t.Error("--help shows the password from the environment")
	}
}

func TestBadSettings(t *testing.T) {
	ctx := context.Background()
	t.Setenv("EDGE_LISTINGS", "many")
	if code, _, errs := runCmd(t, ctx, "seed"); code != 1 || !strings.Contains(errs, "EDGE_LISTINGS") {
		t.Errorf("bad variable: %d %q", code, errs)
	}
	t.Setenv("EDGE_LISTINGS", "10")
	if code, _, errs := runCmd(t, ctx, "seed", "--end", "yesterday"); code != 1 || !strings.Contains(errs, "--end") {
		t.Errorf("bad --end: %d %q", code, errs)
	}
	if code, _, errs := runCmd(t, ctx, "serve", "--log-level", "loud"); code != 1 || !strings.Contains(errs, "log level") {
		t.Errorf("bad log level: %d %q", code, errs)
	}
}

func TestMigrateSeedServe(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg := srv.NewDatabase(t)
	t.Setenv("EDGE_CH_ADDR", cfg.Addr)
	t.Setenv("EDGE_CH_DATABASE", cfg.Database)
	ctx := context.Background()

	if code, out, errs := runCmd(t, ctx, "migrate"); code != 0 || !strings.Contains(out, "applied") {
		t.Fatalf("migrate: %d %q %q", code, out, errs)
	}
	if code, out, _ := runCmd(t, ctx, "migrate"); code != 0 || !strings.Contains(out, "up to date") {
		t.Fatalf("second migrate: %d %q", code, out)
	}
	seedArgs := []string{"seed", "--listings", "300", "--days", "10", "--end", "2026-05-01"}
	if code, out, errs := runCmd(t, ctx, seedArgs...); code != 0 || !strings.Contains(out, "seeded 300 listings") {
		t.Fatalf("seed: %d %q %q", code, out, errs)
	}
	if code, _, errs := runCmd(t, ctx, seedArgs...); code != 1 || !strings.Contains(errs, "--append") {
		t.Fatalf("seed into a full database: %d %q", code, errs)
	}
	if code, out, _ := runCmd(t, ctx, append(seedArgs, "--if-empty")...); code != 0 || !strings.Contains(out, "not seeding") {
		t.Fatalf("seed --if-empty: %d %q", code, out)
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	sctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	var errs bytes.Buffer
	go func() {
		done <- run(sctx, []string{"serve", "--listen", addr, "--log-format", "json"}, &bytes.Buffer{}, &errs)
	}()

	deadline := time.Now().Add(30 * time.Second)
	var ready struct {
		Ready    bool
		Listings map[string]int
	}
	for time.Now().Before(deadline) {
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			json.NewDecoder(resp.Body).Decode(&ready)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	total := 0
	for _, n := range ready.Listings {
		total += n
	}
	if !ready.Ready || total != 300 {
		t.Fatalf("never ready with 300 listings: %+v", ready)
	}
	stop() // as SIGTERM does
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("serve exited %d: %s", code, errs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not stop")
	}
	for _, line := range strings.Split(strings.TrimSpace(errs.String()), "\n") {
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
	}
	if !strings.Contains(errs.String(), "edge stopped") {
		t.Fatalf("no clean stop in the log: %s", errs.String())
	}
}
