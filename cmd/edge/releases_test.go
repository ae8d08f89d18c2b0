package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edge-stats/edge/analytics/chtest"
	"github.com/edge-stats/edge/views/changes"
	"github.com/edge-stats/edge/views/document"
)

// previousRelease is the release before this one: an edge of it and one
// of this tree serve together in one fleet, either leading
// (docs/operations.md, Upgrades). Move it forward at each release.
const previousRelease = "6b3d6a2"

// buildPrevious builds the edge of previousRelease from git: a detached
// worktree of this repository at that commit, built as the Makefile
// builds. Without git or the commit, the test fails: the promise is not
// checked otherwise.
func buildPrevious(t *testing.T) string {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("the release before (%s) is built from git, which is not available here: %v", previousRelease, err)
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	repo := strings.TrimSpace(string(root))
	if out, err := exec.Command("git", "-C", repo, "worktree", "add", "--detach", src, previousRelease).CombinedOutput(); err != nil {
		t.Fatalf("git worktree add of the release before (%s; a shallow clone lacks it: fetch it): %v\n%s", previousRelease, err, out)
	}
	t.Cleanup(func() { exec.Command("git", "-C", repo, "worktree", "remove", "--force", src).Run() })
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	bin := filepath.Join(dir, "edge-"+previousRelease)
	build := exec.Command(goBin, "build", "-trimpath", "-o", bin, "./cmd/edge")
	build.Dir = src
	build.Env = append(os.Environ(), "GOEXPERIMENT=simd", "GOFLAGS=-trimpath")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the release before (%s): %v\n%s", previousRelease, err, out)
	}
	return bin
}

// release is an edge process of one build.
type release struct {
	name, addr string
	log        fileLog
	cmd        *exec.Cmd
}

// startRelease starts the edge binary bin (this tree's: the test binary
// as the edge command) as a member of the fleet at zkPath.
func startRelease(t *testing.T, name, bin string, env []string, zkPath string) *release {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	dir := t.TempDir()
	logFile, err := os.Create(filepath.Join(dir, "edge.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	cmd := exec.Command(bin, "serve", "--listen", addr, "--zk-path", zkPath, "--fleet-listen", "127.0.0.1:0",
		"--fleet-dir", filepath.Join(dir, "fleet"), "--exports-dir", filepath.Join(dir, "exports"), "--memory-limit", "1GiB",
		"--cache-mb", "64", "--refresh-schedule", "@every 2s", "--full-schedule", "0 0 1 1 *", "--follow-every", "1s",
		"--ranks-schedule", "off", "--exports-schedule", "off", "--editions-schedule", "off", "--no-limits")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
		}
	})
	return &release{name: name, addr: addr, log: fileLog{logFile.Name()}, cmd: cmd}
}

// TestTwoReleasesServeOneFleet runs an edge of the release before
// (previousRelease, built from git) and one of this tree over one
// ClickHouse and one ZooKeeper, each way round: both enter one election,
// the follower takes the leader's state from the fleet (never loading
// from ClickHouse), answers with the same bytes and ETags, and takes the
// leader's next state after a crawl.
func TestTwoReleasesServeOneFleet(t *testing.T) {
	srv := chtest.Need(t, srv)
	z := chtest.NeedZooKeeper(t)
	previous := buildPrevious(t)
	cfg, conn := srv.Migrated(t)
	t.Setenv("EDGE_CH_ADDR", cfg.Addr)
	t.Setenv("EDGE_CH_DATABASE", cfg.Database)
	ctx := context.Background()
	if code, out, errs := runCmd(t, ctx, "seed", "--listings", "2000", "--days", "22", "--end", "2026-05-01"); code != 0 {
		t.Fatalf("seed: %d %q %q", code, out, errs)
	}
	env := append(os.Environ(), "EDGE_ZK=127.0.0.1:"+strconv.Itoa(z.Port), "EDGE_FLEET_TOKEN="+fleetToken)
	builds := map[string]struct {
		bin string
		env []string
	}{
		"previous": {previous, env},
		"this":     {os.Args[0], append(env[:len(env):len(env)], envTestAsEdge+"=1")},
	}
	get := func(e *release, path string) (int, string, []byte) {
		resp, err := http.Get("http://" + e.addr + path)
		if err != nil {
			return 0, "", nil
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		b.ReadFrom(resp.Body)
		return resp.StatusCode, resp.Header.Get("ETag"), b.Bytes()
	}
	for round, order := range [][2]string{{"previous", "this"}, {"this", "previous"}} {
		t.Run(order[0]+" leads, "+order[1]+" follows", func(t *testing.T) {
			zkPath := "/edge/test/releases-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(round)
			lb, fb := builds[order[0]], builds[order[1]]
			leader := startRelease(t, order[0], lb.bin, lb.env, zkPath)
			var follower *release
			// A bound on waiting, not on speed (make test's race pass
			// runs beside); a follower that loaded from ClickHouse fails
			// at once.
			eventually := func(what string, cond func() bool) {
				t.Helper()
				deadline := time.Now().Add(120 * time.Second)
				for !cond() {
					fl := ""
					if follower != nil {
						fl = follower.log.String()
					}
					if time.Now().After(deadline) || strings.Contains(fl, "kind=full") || strings.Contains(fl, "kind=refresh") {
						t.Fatalf("%s: not done, or the follower loaded from ClickHouse\nleader (%s): %s\nfollower (%s): %s", what, order[0], leader.log, order[1], fl)
					}
					time.Sleep(100 * time.Millisecond)
				}
			}
			eventually("the first edge leads and writes its state", func() bool {
				return strings.Contains(leader.log.String(), "fleet state written")
			})
			follower = startRelease(t, order[1], fb.bin, fb.env, zkPath)
			// watched are answers a crawl of sizes changes (the summary
			// counts listings, not sizes): state is their ETags.
			watched := []string{"/api/summary", "/api/v1/stores/chrome/stats", "/api/v1/stores/edge/stats", "/api/v1/stores/firefox/stats",
				"/api/v1/stores/apple/stats", "/api/v1/stores/googleplay/stats"}
			state := func(r *release) string {
				var tags []string
				for _, p := range watched {
					_, tag, _ := get(r, p)
					tags = append(tags, tag)
				}
				return strings.Join(tags, " ")
			}
			same := func() bool {
				for _, p := range watched {
					sl, el, bl := get(leader, p)
					so, eo, bo := get(follower, p)
					if sl != 200 || so != 200 || el == "" || el != eo || !bytes.Equal(bl, bo) {
						return false
					}
				}
				return true
			}
			eventually("the second edge serves the first's state", func() bool {
				return strings.Contains(follower.log.String(), "kind=fleet") && same()
			})
			if l := follower.log.String(); strings.Contains(l, "kind=full") || strings.Contains(l, "fleet state written") {
				t.Fatalf("the follower loaded from ClickHouse or led:\n%s", l)
			}
			takeoverCursorsRead(t, leader, follower)
			for _, path := range []string{"/api/summary", "/api/v1/stores/chrome/stats", "/api/v1/charts/firefox?chart=trending",
				"/api/v1/listings?store=edge&sort=rating&limit=20", "/api/extensions?sort=users"} {
				sl, el, bl := get(leader, path)
				so, eo, bo := get(follower, path)
				if sl != 200 || so != sl || el != eo || !bytes.Equal(bl, bo) {
					t.Errorf("%s: the leader answers %d %s %.200s\nthe follower %d %s %.200s", path, sl, el, bl, so, eo, bo)
				}
			}
			// A crawl arrives: the leader refreshes, the follower takes
			// its next state (a delta, when both read it).
			// Its readings are the newest (a second past the data's newest:
			// not in the future, which a refresh does not read yet), so that
			// the listings' sizes, and the store statistics, change.
			// One listing the crawl reads again: its document's size changes
			// whatever the aggregates do.
			var store, id string
			if err := conn.QueryRow(ctx, `SELECT toString(store), id FROM snapshots GROUP BY store, id
				HAVING cityHash64(id) % 50 = `+strconv.Itoa(round)+` ORDER BY store, id LIMIT 1`).Scan(&store, &id); err != nil {
				t.Fatal(err)
			}
			n, _ := strconv.Atoi(store)
			watched = append(watched, "/api/v1/listings/"+[]string{"chrome", "edge", "firefox", "apple", "googleplay"}[n]+"/"+url.PathEscape(id))
			before, beforeF := state(leader), state(follower)
			fleetStates := strings.Count(follower.log.String(), "kind=fleet")
			var newest time.Time
			if err := conn.QueryRow(ctx, `SELECT max(crawled_at) FROM snapshots`).Scan(&newest); err != nil {
				t.Fatal(err)
			}
			at := newest.Add(time.Duration(round+1) * time.Second).UTC().Format(time.DateTime)
			if err := conn.Exec(ctx, `INSERT INTO snapshots (store, id, crawled_at, usage, weekly_downloads, rating, rating_count, stars)
				SELECT store, id, toDateTime('`+at+`'), argMax(usage, crawled_at) + 1, argMax(weekly_downloads, crawled_at),
				argMax(rating, crawled_at), argMax(rating_count, crawled_at), argMax(stars, crawled_at)
				FROM snapshots GROUP BY store, id HAVING cityHash64(id) % 50 = `+strconv.Itoa(round)); err != nil {
				t.Fatal(err)
			}
			// The two releases need not give the same bytes for the state
			// after the crawl (this one anchors the charts to the data's
			// day, 6b3d6a2 to its newest reading, which the crawl moved a
			// second on): the follower takes the leader's next state, from
			// the fleet, and its answers change with it.
			eventually("the leader refreshes and the follower takes its next state", func() bool {
				return state(leader) != before && state(follower) != beforeF &&
					strings.Count(follower.log.String(), "kind=fleet") > fleetStates
			})
			if l := follower.log.String(); strings.Contains(l, "kind=full") || strings.Contains(l, "kind=refresh") {
				t.Fatalf("the follower loaded from ClickHouse:\n%s", l)
			}
		})
	}
}

// takeoverCursorsRead: a takeover's eventId, which only this build lists,
// is a place in the feed the release before reads too (a client that
// took it from one edge asks the other during a rolling upgrade): from
// it, both builds list the same events on (takeovers aside), and both
// page back from it.
func takeoverCursorsRead(t *testing.T, edges ...*release) {
	t.Helper()
	type page struct {
		Events []struct{ EventID, Kind string }
	}
	read := func(e *release, query string) (int, page) {
		var p page
		resp, err := http.Get("http://" + e.addr + "/api/v1/events?" + query)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode == 200 {
			if err := json.NewDecoder(resp.Body).Decode(&p); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode, p
	}
	_, newest := read(edges[0], "limit=30")
	if len(newest.Events) < 10 {
		t.Fatalf("the feed holds %d events", len(newest.Events))
	}
	// A takeover at the place of the tenth newest event: its crawl and
	// listing, after every kind read there.
	at, ok := document.ParseEventCursor(newest.Events[9].EventID)
	if !ok {
		t.Fatalf("eventId %q", newest.Events[9].EventID)
	}
	at.Kind = changes.Takeover
	cursor := url.QueryEscape(document.EventCursor(at))
	var lists []string
	for _, e := range edges {
		status, on := read(e, "limit=50&since="+cursor)
		var ids []string
		for _, ev := range on.Events {
			if ev.Kind != "takeover" {
				ids = append(ids, ev.EventID)
			}
		}
		lists = append(lists, strings.Join(ids, " "))
		if back, _ := read(e, "limit=5&cursor="+cursor); status != 200 || back != 200 || len(ids) == 0 {
			t.Errorf("%s: a takeover's eventId: since answers %d with %d events, cursor %d", e.name, status, len(ids), back)
		}
	}
	if lists[0] != lists[1] {
		t.Errorf("from a takeover's eventId the two builds list different events:\n%s: %s\n%s: %s", edges[0].name, lists[0], edges[1].name, lists[1])
	}
}
