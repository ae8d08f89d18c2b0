package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics"
	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/edge/apikey"
	"github.com/edge-stats/edge/edge/keys"
)

var srv *chtest.Server

func TestMain(m *testing.M) {
	if os.Getenv(envTestAsEdge) == "1" {
		main() // the test binary as the edge command: a process of TestReplaceUnderLoad
		return
	}
	chtest.Main(m, &srv)
}

// envTestAsEdge makes the test binary run as the edge command.
const envTestAsEdge = "EDGE_TEST_AS_EDGE"

func runCmd(t *testing.T, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	return runIn(t, ctx, "", args...)
}

// runIn runs the command with stdin as its standard input.
func runIn(t *testing.T, ctx context.Context, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, strings.NewReader(stdin), &out, &errb)
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
	// Every setting is checked before serve binds an address: with the
	// listen address taken (by another edge, or by `make run` on the
	// default one), a bad setting is refused by name, not by the bind.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	t.Setenv("EDGE_LISTEN", busy.Addr().String()) // the default listen address
	for _, c := range []struct {
		args []string
		want string
	}{
		// Every fleet needs the fleet's token (on loopback too, where any
		// local process could otherwise lead), and a token that is a real
		// secret.
		{[]string{"--zk", "127.0.0.1:2181"}, "edge fleet token"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-listen", "127.0.0.1:0"}, "EDGE_FLEET_TOKEN"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-listen", "10.0.0.5:8081"}, "EDGE_FLEET_TOKEN"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-listen", ":8081"}, "EDGE_FLEET_TOKEN"},
		{[]string{"--zk", "zk.internal:2181", "--zk-auth", "edge:secret"}, "EDGE_FLEET_TOKEN"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-listen", "10.0.0.5:8081", "--fleet-token", "short"}, "edge serve: set EDGE_FLEET_TOKEN to a random token, the same on every edge of the fleet: make one with `edge fleet token` (or take 32 random bytes or more in base64, `openssl rand -base64 48`); the fleet token given is guessable (5 characters, 40 to 512 wanted)\n"},
		// A token of the length the old message asked for (32) is still
		// refused: the message says what passes.
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-token", "Zq7vN2kR9xLp4TbW8mYc3HdF6sJg1QeA"}, "32 characters, 40 to 512 wanted"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-token", strings.Repeat(" ", 32)}, "guessable"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-token", strings.Repeat("a", 32)}, "guessable"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-token", strings.Repeat("password", 4)}, "guessable"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-token", fleetToken, "--fleet-listen", "127.0.0.1:0", "--fleet-advertise", "http://10.0.0.5:8081"}, "--fleet-advertise"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-token", fleetToken, "--zk-path", "edge/fleet"}, "--zk-path"},
		{[]string{"--zk", "127.0.0.1:2181", "--fleet-token", fleetToken, "--fleet-salt", "own"}, "--fleet-salt"},
		{[]string{"--ranks-schedule", "hourly"}, "--ranks-schedule"},
		{[]string{"--full-schedule", "off"}, "--full-schedule"},
		{[]string{"--webhook-key", "short"}, "EDGE_WEBHOOK_KEY"},
		{[]string{"--cache-mb", "0"}, "--cache-mb"},
		{[]string{"--client-header", "via"}, "--client-header"},
		{[]string{"--ipv6-prefix", "129"}, "--ipv6-prefix"},
		{[]string{"--debug-listen", "127.0.0.1"}, "--debug-listen"},
	} {
		// The listen address taken as the default, and as --listen.
		for _, listen := range [][]string{nil, {"--listen", busy.Addr().String()}} {
			args := append(append([]string{"serve"}, c.args...), listen...)
			code, _, errs := runCmd(t, ctx, args...)
			if code != 1 || !strings.Contains(errs, c.want) || strings.Contains(errs, "address already in use") {
				t.Errorf("%v, the listen address taken: %d %q, want it refused naming %s before binding", args, code, errs, c.want)
			}
		}
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		if code, _, errs := runCmd(t, ctx, "serve", "--memory-limit", "12 parsecs"); code != 1 || !strings.Contains(errs, "--memory-limit") {
			t.Errorf("bad memory limit: %d %q", code, errs)
		}
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
	// A webhook receiver on this host, which the allow list names with
	// its port (beside the whole of loopback, which admits no port of the
	// edge's own hosts).
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) }))
	defer rcv.Close()
	sctx, stop := context.WithCancel(ctx)
	done := make(chan int, 1)
	var errs bytes.Buffer
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1)) // serve sets the process's limit: put it back
	exportsDir := t.TempDir()
	go func() {
		done <- run(sctx, []string{"serve", "--listen", addr, "--log-format", "json", "--memory-limit", "2GiB", "--cache-mb", "256",
			"--exports-dir", exportsDir, "--webhook-key", "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=", "--webhook-allow", "127.0.0.0/8,::1," + rcv.Listener.Addr().String(),
			"--webhook-allow-http"},
			strings.NewReader(""), &bytes.Buffer{}, &errs)
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
	webhooksStayOffOwnServices(t, addr, cfg.Addr, srv.HTTPAddr, rcv.URL)
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
	// The heap's soft limit: 2 GiB less a tenth and the answer cache.
	if os.Getenv("GOMEMLIMIT") == "" {
		const want = 2<<30 - (2<<30)/10 - 256<<20
		if got := debug.SetMemoryLimit(-1); got != want || !strings.Contains(errs.String(), `"source":"--memory-limit"`) {
			t.Fatalf("memory limit %d, want %d; log: %s", got, want, errs.String())
		}
	}
}

func TestAccountAndKeyCommands(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg, _ := srv.Migrated(t)
	t.Setenv("EDGE_CH_ADDR", cfg.Addr)
	t.Setenv("EDGE_CH_DATABASE", cfg.Database)
	ctx := context.Background()

	if code, out, errs := runIn(t, ctx, "a long password\n", "account", "create", "--email", "Ops@Example.com"); code != 0 || !strings.Contains(out, "ops@example.com") {
		t.Fatalf("account create: %d %q %q", code, out, errs)
	}
	if code, _, errs := runIn(t, ctx, "a long password\n", "account", "create", "--email", "ops@example.com"); code != 1 || !strings.Contains(errs, "exists") {
		t.Fatalf("second account create: %d %q", code, errs)
	}
	if code, _, errs := runIn(t, ctx, "short\n", "account", "create", "--email", "b@example.com"); code != 1 || !strings.Contains(errs, "password") {
		t.Fatalf("short password: %d %q", code, errs)
	}
	code, key, errs := runCmd(t, ctx, "key", "create", "--email", "ops@example.com")
	key = strings.TrimSpace(key)
	id, ok := apikey.ID(key)
	if code != 0 || !ok || strings.Contains(errs, key) || !strings.Contains(errs, id) {
		t.Fatalf("key create: %d %q %q", code, key, errs)
	}
	if code, out, errs := runCmd(t, ctx, "key", "limit", "--id", id, "--daily", "50000"); code != 0 || !strings.Contains(out, "50000") {
		t.Fatalf("key limit: %d %q %q", code, out, errs)
	}
	code, list, _ := runCmd(t, ctx, "key", "list", "--email", "ops@example.com")
	if code != 0 || !strings.Contains(list, id) || !strings.Contains(list, "active") || !strings.Contains(list, "50000") || strings.Contains(list, key) {
		t.Fatalf("key list: %d %q", code, list)
	}

	reg := keys.NewRegistry(analytics.NewLazy(cfg))
	verify := func() keys.Verdict {
		t.Helper()
		if err := reg.Load(ctx); err != nil {
			t.Fatal(err)
		}
		_, v := reg.Verify(key)
		return v
	}
	if v := verify(); v != keys.Valid {
		t.Fatalf("a new key: %v", v)
	}
	if code, _, errs := runCmd(t, ctx, "account", "disable", "--email", "ops@example.com"); code != 0 {
		t.Fatalf("account disable: %d %q", code, errs)
	}
	if v := verify(); v != keys.Invalid {
		t.Fatalf("a disabled account's key: %v", v)
	}
	runCmd(t, ctx, "account", "enable", "--email", "ops@example.com")
	if v := verify(); v != keys.Valid {
		t.Fatalf("an enabled account's key: %v", v)
	}
	if code, out, errs := runCmd(t, ctx, "key", "revoke", "--id", id); code != 0 || !strings.Contains(out, "revoked") {
		t.Fatalf("key revoke: %d %q %q", code, out, errs)
	}
	if v := verify(); v != keys.Invalid {
		t.Fatalf("a revoked key: %v", v)
	}
	if _, list, _ := runCmd(t, ctx, "key", "list", "--email", "ops@example.com"); !strings.Contains(list, "revoked") {
		t.Fatalf("key list after revoke: %q", list)
	}
	for _, args := range [][]string{{"key"}, {"key", "burn"}, {"key", "revoke"}, {"key", "limit", "--id", id}, {"account", "create"}} {
		if code, _, errs := runCmd(t, ctx, args...); code != 1 || errs == "" {
			t.Errorf("%v: exit %d %q, want 1 with a reason", args, code, errs)
		}
	}
	if code, _, _ := runCmd(t, ctx, "key", "--help"); code != 0 {
		t.Errorf("key --help: exit %d", code)
	}
}

// webhooksStayOffOwnServices registers webhooks at a serving edge whose
// allow list admits all of loopback and names the receiver rcvURL with
// its port: its own ClickHouse (the native port given, the usual HTTP
// port, and its HTTP port chHTTP wherever it is), any other
// port of its hosts (another edge's), its own listen address, and
// addresses hidden behind a zone are refused; the receiver is admitted.
func webhooksStayOffOwnServices(t *testing.T, addr, chAddr, chHTTP, rcvURL string) {
	t.Helper()
	post := func(path, body string, auth bool) (int, string) {
		req, _ := http.NewRequest("POST", "http://"+addr+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if auth {
			req.SetBasicAuth("hooks@example.com", "long enough password")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/account", `{"email":"hooks@example.com","password":"long enough password"}`, false); code != 201 {
		t.Fatalf("sign up: %d %s", code, body)
	}
	_, chPort, _ := net.SplitHostPort(chAddr)
	_, ownPort, _ := net.SplitHostPort(addr)
	_, rcvPort, _ := net.SplitHostPort(strings.TrimPrefix(rcvURL, "http://"))
	other, err := net.Listen("tcp", "127.0.0.1:0") // another edge of this host
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, c := range []struct{ url, want string }{
		{"http://" + chHTTP + "/?input_format_skip_unknown_fields=1&query=INSERT%20INTO%20edge.keys%20FORMAT%20JSONEachRow", "not allowed for webhooks"},
		{"http://" + other.Addr().String() + "/", "not allowed for webhooks"},
		{"http://127.0.0.2:" + rcvPort + "/", "not allowed for webhooks"},
		{"http://127.0.0.1:" + chPort + "/", "not allowed for webhooks"},
		{"http://127.0.0.1:8123/?query=INSERT", "not allowed for webhooks"},
		{"http://127.0.0.2:" + ownPort + "/", "not allowed for webhooks"},
		{"http://[::1]:" + chPort + "/", "not allowed for webhooks"},
		{"http://[::1%251]:9/", "no zone"},
		{"https://[64:ff9b::7f00:1%251]/", "no zone"},
		{"https://[::ffff:0:7f00:1]/", "not allowed for webhooks"},
	} {
		if code, body := post("/account/webhooks", `{"url":"`+c.url+`"}`, true); code != 400 || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want a 400 saying %q", c.url, code, body, c.want)
		}
	}
	if code, body := post("/account/webhooks", `{"url":"`+rcvURL+`/hook"}`, true); code != 201 {
		t.Errorf("a receiver the allow list admits: %d %s", code, body)
	}
}

// TestServeRefusesASchemaItDoesNotServe: serve on a database that holds
// a later release's contract migration exits at once, naming it (issue
// 54; the other cases of analytics.CheckSchema are TestCheckSchema's).
func TestServeRefusesASchemaItDoesNotServe(t *testing.T) {
	srv := chtest.Need(t, srv)
	cfg := srv.NewDatabase(t)
	t.Setenv("EDGE_CH_ADDR", cfg.Addr)
	t.Setenv("EDGE_CH_DATABASE", cfg.Database)
	ctx := context.Background()
	serve := func() (int, string) {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
		var errs bytes.Buffer
		code := run(sctx, []string{"serve", "--listen", "127.0.0.1:0", "--log-format", "json"}, strings.NewReader(""), &bytes.Buffer{}, &errs)
		return code, errs.String()
	}
	if code, _, errs := runCmd(t, ctx, "migrate"); code != 0 {
		t.Fatalf("migrate: %d %q", code, errs)
	}
	conn, err := analytics.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	record := func(version int, name string) {
		t.Helper()
		b, err := conn.PrepareBatch(ctx, "INSERT INTO schema_migrations (version, name, applied_at)")
		if err == nil {
			err = b.Append(uint32(version), name, time.Now())
		}
		if err == nil {
			err = b.Send()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	record(9101, "9101_drop_old_table.contract.sql")
	if code, errs := serve(); code == 0 || !strings.Contains(errs, "9101_drop_old_table.contract.sql") || !strings.Contains(errs, "run the release that made it") {
		t.Fatalf("serve on a later release's contract migration: exit %d, %s", code, errs)
	}
}
