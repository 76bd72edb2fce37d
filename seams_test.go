package main

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestSeamsArePassedPerCall fails on a test that changes what the whole process shares: its environment
// (t.Setenv, os.Setenv, os.Unsetenv, os.Clearenv) or a package-level variable of the package under test (a
// hook such as cli's hasTerminal or brief's scanChunk, swapped and put back). Either forbids t.Parallel and
// leaks into the tests that run beside it: a test passes its environment and its seams per call instead
// (docs/DEVELOPMENT.md). Test helper packages (…test) are held to the same rule as _test.go files.
func TestSeamsArePassedPerCall(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	type file struct {
		path string
		f    *ast.File
	}
	var tests []file
	vars := map[string]map[string]bool{} // folder → the package-level variables of its non-test files
	eachGoFile(t, fset, 0, func(string) bool { return true }, func(path string, f *ast.File) {
		if isTestCode(path, f) {
			tests = append(tests, file{path, f})
		}
		if strings.HasSuffix(path, "_test.go") {
			return
		}
		dir := filepath.Dir(path)
		if vars[dir] == nil {
			vars[dir] = map[string]bool{}
		}
		for _, name := range packageVars(f) {
			vars[dir][name] = true
		}
	})
	for _, tf := range tests {
		for _, problem := range processWideChanges(tf.f, vars[filepath.Dir(tf.path)]) {
			t.Errorf("%s: %s", fset.Position(problem.pos), problem.what)
		}
	}
}

// isTestCode is a _test.go file, or a file of a test helper package (sshtest, agentpanetest …).
func isTestCode(path string, f *ast.File) bool {
	return strings.HasSuffix(path, "_test.go") || strings.HasSuffix(f.Name.Name, "test")
}

// packageVars are the names of f's package-level variables.
func packageVars(f *ast.File) []string {
	var names []string
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.VAR {
			continue
		}
		for _, spec := range gen.Specs {
			for _, n := range spec.(*ast.ValueSpec).Names {
				names = append(names, n.Name)
			}
		}
	}
	return names
}

type seamProblem struct {
	pos  token.Pos
	what string
}

// processWideChanges finds in a test file the calls that change the process's environment, and the
// assignments to the package-level variables vars of the package under test (in a package of its own,
// pkg.Var for its package pkg). A local variable of the same name as one of vars is told apart by its
// declaration in the same function.
func processWideChanges(f *ast.File, vars map[string]bool) []seamProblem {
	var out []seamProblem
	under := strings.TrimSuffix(f.Name.Name, "_test")
	external := under != f.Name.Name
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil {
			continue
		}
		locals := declaredIn(fn)
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CallExpr:
				if sel, ok := n.Fun.(*ast.SelectorExpr); ok {
					switch sel.Sel.Name {
					case "Setenv", "Unsetenv", "Clearenv":
						out = append(out, seamProblem{n.Pos(), sel.Sel.Name + " changes the environment of the whole process: pass it per call"})
					}
				}
			case *ast.AssignStmt:
				if n.Tok == token.DEFINE {
					return true
				}
				for _, lhs := range n.Lhs {
					if name, ok := packageVarOf(lhs, vars, locals, external, under); ok {
						out = append(out, seamProblem{lhs.Pos(), "assigns " + name + ", a package-level variable of the package under test: pass it per call"})
					}
				}
			case *ast.IncDecStmt:
				if name, ok := packageVarOf(n.X, vars, locals, external, under); ok {
					out = append(out, seamProblem{n.Pos(), "changes " + name + ", a package-level variable of the package under test"})
				}
			}
			return true
		})
	}
	return out
}

// packageVarOf is the package-level variable that e (x, x.f, x[i], pkg.X …) writes to, if it is one of vars.
func packageVarOf(e ast.Expr, vars, locals map[string]bool, external bool, pkg string) (string, bool) {
	for {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name, !external && vars[x.Name] && !locals[x.Name]
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && external && id.Name == pkg && vars[x.Sel.Name] {
				return pkg + "." + x.Sel.Name, true
			}
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.StarExpr:
			e = x.X
		case *ast.ParenExpr:
			e = x.X
		default:
			return "", false
		}
	}
}

// declaredIn are the names fn declares: its parameters, results and every variable it defines, which hide a
// package-level variable of the same name.
func declaredIn(fn *ast.FuncDecl) map[string]bool {
	names := map[string]bool{}
	addFields := func(fl *ast.FieldList) {
		if fl == nil {
			return
		}
		for _, field := range fl.List {
			for _, n := range field.Names {
				names[n.Name] = true
			}
		}
	}
	if fn.Recv != nil {
		addFields(fn.Recv)
	}
	addFields(fn.Type.Params)
	addFields(fn.Type.Results)
	ast.Inspect(fn.Body, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, l := range n.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						names[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				names[id.Name] = true
			}
		case *ast.RangeStmt:
			for _, x := range []ast.Expr{n.Key, n.Value} {
				if id, ok := x.(*ast.Ident); ok && n.Tok == token.DEFINE {
					names[id.Name] = true
				}
			}
		case *ast.FuncLit:
			addFields(n.Type.Params)
			addFields(n.Type.Results)
		}
		return true
	})
	return names
}
