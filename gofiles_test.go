package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// eachGoFile parses every Go file of the repository whose path keep accepts (hidden folders and testdata
// left out) and hands it to each: the one walk the repository-wide checks share.
func eachGoFile(t *testing.T, fset *token.FileSet, mode parser.Mode, keep func(path string) bool, each func(path string, f *ast.File)) {
	t.Helper()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || !keep(path) {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, mode|parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		each(path, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// notTest keeps the files that are not tests.
func notTest(path string) bool { return !strings.HasSuffix(path, "_test.go") }
