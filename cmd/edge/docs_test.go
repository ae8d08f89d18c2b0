package main

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestEveryFlagIsDocumented fails when a flag of a command (or its
// EDGE_* variable) is missing from docs/configuration.md.
func TestEveryFlagIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	flagLine := regexp.MustCompile(`(?m)^\s+-([a-z0-9-]+)`)
	seen := 0
	for _, c := range commands(strings.NewReader("")) {
		// Every command has its row in the command table.
		if !bytes.Contains(doc, []byte("| `edge "+c.name+"`")) && !bytes.Contains(doc, []byte("`edge "+c.name+"`, ")) &&
			!bytes.Contains(doc, []byte(", `edge "+c.name+"` |")) {
			t.Errorf("edge %s is not in docs/configuration.md's command table", c.name)
		}
		var out bytes.Buffer
		run(context.Background(), []string{c.name, "--help"}, strings.NewReader(""), &out, &out)
		for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
			name := m[1]
			seen++
			if !bytes.Contains(doc, []byte("EDGE_"+envName(name))) && !bytes.Contains(doc, []byte("--"+name)) {
				t.Errorf("edge %s --%s (EDGE_%s) is not in docs/configuration.md", c.name, name, envName(name))
			}
		}
	}
	if seen < 40 {
		t.Fatalf("only %d flags found in the commands' help; the test no longer reads it", seen)
	}
}
