package main

import (
	"go/ast"
	"go/token"
	"testing"
)

// maxFuncLines is issue 33's bound on a function a reader must hold in their head; test code is exempt.
const maxFuncLines = 120

// TestFunctionsFitInAHead fails on any non-test function (with the literals inside it) longer than
// maxFuncLines lines: split it by what it does.
func TestFunctionsFitInAHead(t *testing.T) {
	fset := token.NewFileSet()
	eachGoFile(t, fset, 0, notTest, func(_ string, file *ast.File) {
		long := func(name string, n ast.Node) {
			if lines := fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1; lines > maxFuncLines {
				t.Errorf("%s: %s is %d lines, over %d: split it by what it does", fset.Position(n.Pos()), name, lines, maxFuncLines)
			}
		}
		for _, decl := range file.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Body != nil {
					long(d.Name.Name, d)
				}
			case *ast.GenDecl: // a function literal held in a package variable is a function too
				ast.Inspect(d, func(n ast.Node) bool {
					if lit, ok := n.(*ast.FuncLit); ok {
						long("a function literal", lit)
						return false
					}
					return true
				})
			}
		}
	})
}
