package edge_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Size bounds of the code (docs/testing.md, One job a file): no non-test
// file past maxFileLines but the data generators named, no function past
// maxFuncLines but the algorithm kernels named, and the functions still
// to split, which may not grow.
const (
	maxFileLines = 500
	maxFuncLines = 80
)

// bigFiles are the data generators: tables of what a synthetic dataset
// holds, read top to bottom.
var bigFiles = map[string]bool{
	"analytics/seed/gen.go": true,
}

// kernels are the algorithm kernels, each one loop or one decoder read
// top to bottom, that a split would only scatter: the query engine's
// walk, plan, match and scans; the text index's build and search; the
// charts', the editions' and the links' builds; the codecs of a delta and
// of the change log; the replay path's request framing; the review
// search's query parser; the seed's row and history generators.
var kernels = map[string]bool{
	"views/listq/list.go List":                   true,
	"views/listq/plan.go plan":                   true,
	"views/listq/plan.go match":                  true,
	"views/listq/scan.go kernels":                true,
	"views/listq/filtercols.go buildFilterCols":  true,
	"views/textindex/text.go Build":              true,
	"views/textindex/search.go Search":           true,
	"views/textindex/search.go newNeedle":        true,
	"views/figures/figures.go chartStore":        true,
	"views/editions/editions.go buildStore":      true,
	"views/links/links.go Build":                 true,
	"views/replica/delta.go readDelta":           true,
	"views/changes/codec.go ReadLog":             true,
	"edge/transport/replay_linux.go read":        true,
	"analytics/reviewsearch.go ParseSearchQuery": true,
	"analytics/seed/gen.go history":              true,
	"analytics/seed/gen.go listingRow":           true,
}

// toSplit are the functions past the bound that are not kernels: each
// holds its length (in lines) until it is split, and may not grow. None
// is waiting now; the list stays for a kernel that stops being one.
var toSplit = map[string]int{}

// TestSizeBounds walks the module's non-test Go files (bench aside: its
// programs are measurements) and holds them to the bounds above; the
// functions of a generated file (a "Code generated ... DO NOT EDIT."
// header) are bounded by what they are generated from.
func TestSizeBounds(t *testing.T) {
	root := ".."
	fset := token.NewFileSet()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || rel == "bench" || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if n := strings.Count(string(src), "\n"); n > maxFileLines {
			if seen[rel] = bigFiles[rel]; !seen[rel] {
				t.Errorf("%s: %d lines (at most %d): split it by what it does", rel, n, maxFileLines)
			}
		}
		f, err := parser.ParseFile(fset, path, src, parser.ParseComments)
		if err != nil {
			return err
		}
		if ast.IsGenerated(f) {
			return nil // written by a generator from declarations that are bounded (jsongen's structs)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			name := rel + " " + fn.Name.Name
			switch limit, split := toSplit[name]; {
			case split:
				seen[name] = true
				if n > limit {
					t.Errorf("%s: %d lines, grown past the %d it had (at most %d): split it", name, n, limit, maxFuncLines)
				}
				if n <= maxFuncLines {
					t.Errorf("%s: %d lines, within the bound now: take it off toSplit", name, n)
				}
			case n > maxFuncLines && kernels[name]:
				seen[name] = true
			case n > maxFuncLines:
				t.Errorf("%s: %d lines (at most %d): split it, or name it a kernel in docs/testing.md and here", name, n, maxFuncLines)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name := range toSplit {
		if !seen[name] {
			t.Errorf("%s: in toSplit, but gone: take it off the list", name)
		}
	}
	for name := range kernels {
		if !seen[name] {
			t.Errorf("%s: named a kernel, but gone or within %d lines: take it off the list", name, maxFuncLines)
		}
	}
	for name := range bigFiles {
		if !seen[name] {
			t.Errorf("%s: named a data generator, but gone or within %d lines: take it off the list", name, maxFileLines)
		}
	}
}
