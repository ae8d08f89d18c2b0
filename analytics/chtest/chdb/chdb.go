// Package chdb runs SQL on a current ClickHouse release for tests: the
// engine of npm's chdb (ClickHouse 26 as an embedded library), driven by a
// Node.js script (node/run.js) in a session of its own. It has no server
// and no native protocol, so tests give it SQL text, the same text the
// edge's client sent to a server, and compare what it answers.
//
// `make deps` installs the pinned package (node/package-lock.json) with
// deploy/node.sh; Find says where it is, or why it is not.
package chdb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrMissing is returned by Find when Node.js or the chdb package is not
// installed.
var ErrMissing = errors.New("the current ClickHouse engine (npm's chdb) is not installed: run make deps")

// Engine runs SQL steps on the embedded engine.
type Engine struct {
	node string // the node binary
	dir  string // the folder holding run.js and node_modules
}

// Find locates Node.js (in EDGE_TEST_NODE_DIR when set, else on PATH)
// and the installed chdb package next to this file.
func Find() (*Engine, error) {
	dir, err := nodeDir()
	if err != nil {
		return nil, fmt.Errorf("%w (%v)", ErrMissing, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "chdb", "package.json")); err != nil {
		return nil, fmt.Errorf("%w (%s has no node_modules/chdb)", ErrMissing, dir)
	}
	node := "node"
	if d := os.Getenv("EDGE_TEST_NODE_DIR"); d != "" {
		node = filepath.Join(d, "node")
	}
	p, err := exec.LookPath(node)
	if err != nil {
		return nil, fmt.Errorf("%w (no node: %v)", ErrMissing, err)
	}
	return &Engine{node: p, dir: dir}, nil
}

// Step is one statement. With a Format the statement's result is returned
// in that output format (TabSeparatedWithNamesAndTypes, say); without one
// only whether it ran.
type Step struct {
	SQL    string `json:"sql"`
	Format string `json:"format,omitempty"`
}

// Result is what the engine answered to one step.
type Result struct {
	OK    bool   `json:"ok"`
	Out   string `json:"out"`
	Error string `json:"error"`
}

// Run runs the steps in order in one new session (its data under a
// temporary folder, removed afterwards), each step whatever the previous
// ones answered, and returns one result per step and the engine's version.
func (e *Engine) Run(ctx context.Context, steps []Step) (results []Result, version string, err error) {
	tmp, err := os.MkdirTemp("", "edge-chdb-*")
	if err != nil {
		return nil, "", fmt.Errorf("chdb: %w", err)
	}
	defer os.RemoveAll(tmp)
	in, out := filepath.Join(tmp, "steps.json"), filepath.Join(tmp, "results.json")
	body, err := json.Marshal(map[string]any{"session": filepath.Join(tmp, "session"), "steps": steps})
	if err != nil {
		return nil, "", fmt.Errorf("chdb: %w", err)
	}
	if err := os.WriteFile(in, body, 0o600); err != nil {
		return nil, "", fmt.Errorf("chdb: %w", err)
	}
	cmd := exec.CommandContext(ctx, e.node, filepath.Join(e.dir, "run.js"), in, out)
	cmd.Dir = e.dir
	if msg, err := cmd.CombinedOutput(); err != nil {
		return nil, "", fmt.Errorf("chdb: run.js: %w: %s", err, tail(string(msg), 2000))
	}
	raw, err := os.ReadFile(out)
	if err != nil {
		return nil, "", fmt.Errorf("chdb: read results: %w", err)
	}
	var res struct {
		Version string   `json:"version"`
		Results []Result `json:"results"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, "", fmt.Errorf("chdb: decode results: %w", err)
	}
	if len(res.Results) != len(steps) {
		return nil, "", fmt.Errorf("chdb: %d results for %d steps", len(res.Results), len(steps))
	}
	return res.Results, res.Version, nil
}

func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// nodeDir returns the folder of node/run.js: next to this file when the
// build recorded its absolute path, else (a build with -trimpath, as make
// test runs) found from the working directory, which for a test is its
// package's folder inside the module.
func nodeDir() (string, error) {
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		return filepath.Join(filepath.Dir(file), "node"), nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("find the module: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "analytics", "chtest", "chdb", "node"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.mod above %s", wd)
		}
	}
}
