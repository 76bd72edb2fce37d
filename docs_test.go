package main

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README is the door, not the house: what it is, set-up, the tour and where to read on. The rest lives
// in docs/, so the README stays short enough to be read whole.
func TestReadmeIsShort(t *testing.T) {
	data, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > 300 {
		t.Errorf("README.md has %d lines, more than 300: move the detail to docs/ and link it", n)
	}
}

var mdLink = regexp.MustCompile(`\]\(([^)#\s]+)(#[^)\s]*)?\)`)

// Every relative link of the README and docs/ names a file of the repository.
func TestDocLinksResolve(t *testing.T) {
	docs, _ := filepath.Glob("docs/*.md")
	for _, doc := range append([]string{"README.md"}, docs...) {
		data, err := os.ReadFile(doc)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(doc), target)); err != nil {
				t.Errorf("%s links to %s, which is not in the repository", doc, target)
			}
		}
	}
}

// A document a comment cites: a path under docs/, or a name in capitals (README.md, FORMATS.md). Lower-case
// names in comments are run files (plan.md), not documents.
var citedDoc = regexp.MustCompile(`(?:\bdocs/[A-Za-z0-9_.-]+\.md|\b[A-Z][A-Z0-9_]*\.md)\b`)

// The team's notes that the repository does not hold: the facts the code relies on from them are in
// docs/FORMATS.md and the other docs, which comments cite instead.
var notInRepo = regexp.MustCompile(`\bSPEC\b|\bformats\.md\b|\bENGINEERING\b`)

// A section of docs/FORMATS.md that a comment cites by its number ("docs/FORMATS.md A.2", "FORMATS.md C.1").
var citedFormatsSection = regexp.MustCompile(`FORMATS\.md,? (?:section )?([A-C]\.[0-9]+)`)

// No comment cites a document the repository does not hold, nor a section of docs/FORMATS.md it does not
// have: the person who takes over must be able to read what a comment points to.
func TestCommentsCiteDocsInTheRepo(t *testing.T) {
	formats, err := os.ReadFile("docs/FORMATS.md")
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]bool{}
	for _, line := range strings.Split(string(formats), "\n") {
		if heading := strings.TrimLeft(line, "#"); heading != line && strings.HasPrefix(heading, " ") {
			if number, _, _ := strings.Cut(strings.TrimSpace(heading), " "); number != "" {
				sections[number] = true
			}
		}
	}
	fset := token.NewFileSet()
	eachGoFile(t, fset, parser.ParseComments, func(string) bool { return true }, func(path string, f *ast.File) {
		for _, group := range f.Comments {
			for _, c := range group.List {
				pos := fset.Position(c.Pos())
				if m := notInRepo.FindString(c.Text); m != "" {
					t.Errorf("%s:%d cites %s, which is not in the repository: cite docs/ (FORMATS.md, ARCHITECTURE.md, ...) instead", path, pos.Line, m)
				}
				for _, m := range citedFormatsSection.FindAllStringSubmatch(c.Text, -1) {
					if !sections[m[1]] {
						t.Errorf("%s:%d cites docs/FORMATS.md %s, which has no such section", path, pos.Line, m[1])
					}
				}
				for _, doc := range citedDoc.FindAllString(c.Text, -1) {
					if !notInRepo.MatchString(doc) && !docExists(filepath.Dir(path), doc) {
						t.Errorf("%s:%d cites %s, which is not in the repository", path, pos.Line, doc)
					}
				}
			}
		}
	})
}

// docExists finds a cited document where a reader would look: from the repository's root, beside the file,
// or in docs/.
func docExists(dir, doc string) bool {
	for _, p := range []string{doc, filepath.Join(dir, doc), filepath.Join("docs", doc)} {
		if _, err := os.Stat(p); err == nil {
			return true
		}
	}
	return false
}
