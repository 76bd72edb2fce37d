// The guard of the dashboard's package layout (issue 28): a component below ui/ imports neither ui nor a
// sibling component, and the shared leaf packages import no component, so no feature can reach across.

package ui

import (
	"go/build"
	"os"
	"slices"
	"strings"
	"testing"
)

// leaves are the packages below ui/ that every component may use; every other directory is a component.
var leaves = map[string]bool{"app": true, "keys": true, "text": true, "theme": true}

func TestComponentsImportNoSibling(t *testing.T) {
	t.Parallel()
	dirs, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var comps []string
	for _, d := range dirs {
		if d.IsDir() && d.Name() != "testdata" {
			comps = append(comps, d.Name())
		}
	}
	if len(comps) < len(leaves)+2 {
		t.Fatalf("ui/ has only %v below it: the components have not been found", comps)
	}
	for _, c := range comps {
		pkg, err := build.ImportDir(c, 0)
		if err != nil {
			t.Fatalf("ui/%s: %v", c, err)
		}
		if pkg.Doc == "" {
			t.Errorf("ui/%s: no package comment says what it is for", c)
		}
		for _, imp := range append(pkg.Imports, pkg.TestImports...) {
			if imp == "runwatch/ui" {
				t.Errorf("ui/%s imports ui: a component talks to the root through messages, never its fields", c)
				continue
			}
			other, ok := strings.CutPrefix(imp, "runwatch/ui/")
			if !ok || other == c {
				continue
			}
			if top, _, _ := strings.Cut(other, "/"); !leaves[top] {
				t.Errorf("ui/%s imports ui/%s: components share only the leaf packages %v", c, other, keysOf(leaves))
			}
		}
	}
}

func keysOf(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
