package main

import (
	"go/ast"
	"go/token"
	"regexp"
	"testing"
)

// TestNoParenthesisedPlurals fails on a message that says "item(s)" (issue 36): a count says "1 item" or
// "2 items", through package plural.
func TestNoParenthesisedPlurals(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	word := regexp.MustCompile(`[A-Za-z]\(s\)`)
	eachGoFile(t, fset, 0, notTest, func(_ string, file *ast.File) {
		ast.Inspect(file, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING && word.MatchString(lit.Value) {
				t.Errorf("%s: %s: say the count through package plural, not \"(s)\"", fset.Position(lit.Pos()), lit.Value)
			}
			return true
		})
	})
}
