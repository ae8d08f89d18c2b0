package v1

import (
	"os"
	"testing"
)

// TestDefinitionsDoc checks that docs/definitions.md is made from the
// definitions the API serves; EDGE_UPDATE_DOCS=1 rewrites it.
func TestDefinitionsDoc(t *testing.T) {
	const path = "../../docs/definitions.md"
	want := DefinitionsMarkdown()
	if os.Getenv("EDGE_UPDATE_DOCS") == "1" {
		if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Fatalf("%s is not made from the served definitions: run EDGE_UPDATE_DOCS=1 go test ./edge/v1 -run TestDefinitionsDoc", path)
	}
}

// TestDefinitionNamesAreUnique checks that each definition has one name.
func TestDefinitionNamesAreUnique(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Definitions {
		if seen[d.Name] {
			t.Errorf("definition %q twice", d.Name)
		}
		seen[d.Name] = true
	}
}
