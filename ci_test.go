package main

import (
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestCIRunsEveryHeapTest: a test that calls heaptest.SkipUnderRace does not run in .ci/run's race step, so
// .ci/run's heap step must select it (HEAP_TESTS) in its package (HEAP_PACKAGES), or CI never runs it.
func TestCIRunsEveryHeapTest(t *testing.T) {
	script, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	setting := func(name string) string {
		m := regexp.MustCompile(`(?m)^` + name + `='([^']*)'$`).FindSubmatch(script)
		if m == nil {
			t.Fatalf(".ci/run sets no %s='...'", name)
		}
		return string(m[1])
	}
	selected := regexp.MustCompile(setting("HEAP_TESTS"))
	packages := strings.Fields(setting("HEAP_PACKAGES"))
	found := 0
	fset := token.NewFileSet()
	eachGoFile(t, fset, 0, func(path string) bool { return !notTest(path) }, func(path string, file *ast.File) {
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") || !callsSkipUnderRace(fn.Body) {
				continue
			}
			found++
			if !selected.MatchString(fn.Name.Name) {
				t.Errorf("%s: %s skips under -race and .ci/run's HEAP_TESTS does not select it", path, fn.Name.Name)
			}
			if pkg := "./" + filepath.Dir(path); !slices.Contains(packages, pkg) {
				t.Errorf("%s: %s skips under -race and .ci/run's HEAP_PACKAGES does not name %s", path, fn.Name.Name, pkg)
			}
		}
	})
	if found == 0 {
		t.Error("no test calls heaptest.SkipUnderRace: this test looks for the wrong call")
	}
}

// callsSkipUnderRace says body calls heaptest.SkipUnderRace.
func callsSkipUnderRace(body *ast.BlockStmt) bool {
	called := false
	ast.Inspect(body, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "SkipUnderRace" {
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == "heaptest" {
				called = true
			}
		}
		return !called
	})
	return called
}
