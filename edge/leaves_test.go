package edge_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// TestLeavesStayLeaves: the packages every request passes through, and
// the two that hold no I/O, import neither ClickHouse nor the jobs nor
// the published state, so that a change there cannot pull a database
// driver or a job into a problem+json answer (the layout of README.md,
// A map of the code). Each rule names what a package may not depend on,
// directly or through another.
func TestLeavesStayLeaves(t *testing.T) {
	const (
		module     = "github.com/edge-stats/edge"
		clickhouse = "github.com/ClickHouse/clickhouse-go"
	)
	heavy := []string{clickhouse, module + "/analytics", module + "/cron", module + "/views"}
	rules := map[string][]string{
		"edge/problem":      heavy,
		"edge/clientip":     heavy,
		"edge/coding":       heavy,
		"edge/missgate":     heavy,
		"edge/apikey":       heavy,
		"edge/transport":    heavy,
		"edge/ratelimit":    heavy,
		"edge/replay":       heavy,
		"edge/answer":       heavy,
		"edge/pages/render": heavy,
		"cron/every":        heavy,
		// The state and the tool server import nothing of the project's
		// state, jobs, server or database (the helpers of internal/ they
		// may).
		"views": {module + "/analytics", module + "/cron", module + "/edge", module + "/mcp", clickhouse},
		"mcp":   {module + "/analytics", module + "/cron", module + "/edge", module + "/views", clickhouse},
	}
	// The state's rooms stack in one order (README.md, A map of the
	// code): none imports a room above it, and the shared vocabulary
	// (views) none of them.
	rooms := []string{"textindex", "replica", "links", "radix", "listq", "feed", "figures", "served"}
	for i, room := range rooms {
		var above []string
		for _, r := range rooms[i+1:] {
			above = append(above, module+"/views/"+r)
		}
		rules["views/"+room] = append(above, module+"/analytics", module+"/cron", module+"/edge", module+"/mcp", clickhouse)
	}
	for _, r := range rooms {
		rules["views"] = append(rules["views"], module+"/views/"+r)
	}
	// The documents sit above the state's rooms and below everything that
	// writes them: both APIs, the pages, the webhooks and the exports
	// (README.md, A map of the code). No API imports another's documents.
	rules["views/document"] = []string{module + "/analytics", module + "/cron", module + "/edge", module + "/mcp", clickhouse}
	// The helpers of internal/ sit below every package: they import
	// nothing of the project outside internal/, and no database driver.
	for _, pkg := range []string{"internal/jsonw", "internal/csvw", "internal/numfmt", "internal/lowprio", "internal/memory", "internal/follow"} {
		rules[pkg] = []string{module + "/analytics", module + "/builder", module + "/cron", module + "/edge", module + "/fleet", module + "/views", module + "/mcp", clickhouse}
	}
	for _, pkg := range []string{"edge/legacy", "edge/webhooks"} {
		rules[pkg] = []string{module + "/edge/v1"}
	}
	// The fleet is one package tree below the server: it hands the edge
	// one value (fleet.Member) and imports nothing of the edge.
	for _, pkg := range []string{"fleet", "fleet/leader", "fleet/exchange", "fleet/trust", "fleet/relay"} {
		rules[pkg] = []string{module + "/edge", module + "/mcp"}
	}
	// The state builder and the job runner sit below the server too, and
	// the job runner below the builder whose jobs it runs: cron imports
	// nothing of builder/ (what both need sits in internal/).
	rules["builder"] = []string{module + "/edge", module + "/mcp", module + "/fleet"}
	rules["cron"] = []string{module + "/edge", module + "/mcp", module + "/fleet", module + "/builder"}
	// The pages sit above the API whose typed results they write: the API
	// imports none of them.
	rules["edge/v1"] = []string{module + "/edge/pages"}
	// The pages are codecs of the API's reads (package read): they read
	// no database, so none of them imports the analytics or the driver
	// (they reach both only through the API's reads: direct, below).
	direct := map[string][]string{"edge/pages/...": {module + "/analytics", clickhouse}}
	// The serve path of the reads knows the answers and the state, not
	// the database, the API or the pages.
	rules["edge/read"] = []string{module + "/analytics", clickhouse, module + "/edge/v1", module + "/edge/pages"}
	// make test names its go (GO); a build with -trimpath records no
	// GOROOT, and then the go on PATH is used.
	goBin := os.Getenv("GO")
	if goBin == "" {
		goBin = "go"
		if root := runtime.GOROOT(); root != "" {
			goBin = filepath.Join(root, "bin", "go")
		}
	}
	// Every arrow runs down the floors of README.md's map: no package
	// imports one of a floor above its own (bench/ and the tools outside
	// these trees are not floors).
	floors := []string{"internal", "views", "analytics", "cron", "builder", "fleet", "mcp", "edge", "cmd"}
	floor := func(path string) int {
		rest, ok := strings.CutPrefix(path, module+"/")
		if !ok {
			return -1
		}
		top, _, _ := strings.Cut(rest, "/")
		return slices.Index(floors, top)
	}
	out, err := exec.Command(goBin, "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "../...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list ../...: %v\n%s", err, out)
	}
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		pkg := fields[0]
		at := floor(pkg)
		if at < 0 {
			continue
		}
		for _, dep := range fields[1:] {
			if f := floor(dep); f > at {
				t.Errorf("%s (floor %s) depends on %s (floor %s, above it)", pkg, floors[at], dep, floors[f])
			}
		}
	}
	for pkgs, banned := range direct {
		out, err := exec.Command(goBin, "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "../"+pkgs).CombinedOutput()
		if err != nil {
			t.Fatalf("go list %s: %v\n%s", pkgs, err, out)
		}
		for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			fields := strings.Fields(line)
			for _, imp := range fields[1:] {
				for _, b := range banned {
					if imp == b || strings.HasPrefix(imp, b+"/") {
						t.Errorf("%s imports %s (it may not import %s)", fields[0], imp, b)
					}
				}
			}
		}
	}
	for pkg, banned := range rules {
		out, err := exec.Command(goBin, "list", "-deps", "../"+pkg).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", pkg, err, out)
		}
		for dep := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
			for _, b := range banned {
				if dep == b || strings.HasPrefix(dep, b+"/") && !strings.HasPrefix(dep, module+"/"+pkg) {
					t.Errorf("%s depends on %s (it may not depend on %s)", pkg, dep, b)
				}
			}
		}
	}
}
