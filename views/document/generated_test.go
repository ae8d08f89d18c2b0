package document

import (
	"os"
	"strings"
	"testing"

	"github.com/edge-stats/edge/internal/jsonw/jsongen"
)

// TestEncodersAreGenerated fails when the documents' encoders are not
// what jsongen writes from the structs as they are now (a field added,
// renamed or retagged without `go generate ./views/document`), reading
// the file and the types from doc.go's go:generate line.
func TestEncodersAreGenerated(t *testing.T) {
	doc, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for line := range strings.Lines(string(doc)) {
		if rest, ok := strings.CutPrefix(line, "//go:generate "); ok && strings.Contains(rest, "jsongen") {
			args = strings.Fields(rest)
		}
	}
	i := 0
	for i < len(args) && args[i] != "-out" {
		i++
	}
	if i+2 >= len(args) {
		t.Fatalf("doc.go has no go:generate line of jsongen with -out and types: %q", args)
	}
	file, roots := args[i+1], args[i+2:]
	want, err := jsongen.Generate(".", roots)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not what jsongen writes for %v now: run go generate ./views/document", file, roots)
	}
}
